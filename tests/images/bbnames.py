"""Every name our layers ask for, read from our recipe files without bitbake, and where
each one is provided: by the pinned upstream layers (the manifest tools/yocto-manifest
wrote from a real parse, tests/images/upstream-manifest/<board>.json.gz) or by a recipe
of ours.

The reader knows the part of bitbake's syntax our layers use: assignments (= ?= ??= :=
+= =+ .= =.), :append/:prepend/:remove and override conditions, `require`/`include`,
`inherit` of our own classes, ${VAR} and ${@python} with the `def` functions of the
recipe and its classes. A line it cannot read or a name it cannot expand is reported,
never passed over.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
LAYERS = {"foosball": REPO / "meta-foosball", "foosball-thirdparty": REPO / "recipes"}
MANIFEST_DIR = REPO / "tests/images/upstream-manifest"
BOARDS = ("pole", "vision", "strategy")
# Dynamic layers of meta-foosball and the BSP collection that turns each on.
DYNAMIC = {"rockchip": "rockchip", "stm-st-stm32mp": "stm-st-stm32mp"}
BOARD_COLLECTIONS = {
    "pole": {"stm-st-stm32mp", "stm-st-stm32mprt", "webkit"},
    "vision": {"rockchip", "meta-arm"},
    "strategy": {"stm-st-stm32mp", "webkit"},
}
# Variables whose first ":" part is a package name, not an override.
PACKAGE_VARS = {
    "RDEPENDS",
    "RRECOMMENDS",
    "RSUGGESTS",
    "RPROVIDES",
    "FILES",
    "SUMMARY",
    "ALLOW_EMPTY",
}
BUILD_NAMES = ("DEPENDS", "WKS_FILE_DEPENDS", "EXTRA_IMAGEDEPENDS")
RUNTIME_NAMES = (
    "IMAGE_INSTALL",
    "MACHINE_EXTRA_RRECOMMENDS",
    "MACHINE_EXTRA_RDEPENDS",
    "MACHINE_ESSENTIAL_EXTRA_RDEPENDS",
)
DEFAULT_PACKAGES = "${PN}-src ${PN}-dbg ${PN}-staticdev ${PN}-dev ${PN}-doc ${PN}-locale ${PN}"
ASSIGNMENT = re.compile(
    r"^(?:export\s+)?(?P<key>[A-Za-z0-9_${}\-/.+~:]+?)(?:\[(?P<flag>[^\]]+)\])?\s*"
    r"(?P<op>\?\?=|\?=|:=|\+=|=\+|\.=|=\.|=)\s*(?P<quote>[\"'])(?P<value>.*)(?P=quote)$"
)
VAR_REF = re.compile(r"\$\{([A-Za-z0-9_\-/.+~]+)\}")
PYTHON_REF = re.compile(r"\$\{@(?:\{.*?\}|.)+?\}")  # bitbake's own (bb/data_smart.py)


class UnreadableError(ValueError):
    """A line of our layers the reader cannot take apart, or a name it cannot expand."""


@cache
def manifest(board: str) -> dict:
    path = MANIFEST_DIR / f"{board}.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))


@dataclass
class Op:
    key: str  # VAR or VAR:pkg
    kind: str  # the operator, or append/prepend/remove
    overrides: tuple[str, ...]
    value: str
    source: str


@dataclass
class Recipe:
    path: Path
    pn: str
    ops: list[Op] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    inherits: list[str] = field(default_factory=list)


def logical_lines(text: str, source: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(statements with their file:line, `def` function sources); python/shell task
    bodies are left out (they name no package)."""
    lines = text.splitlines()
    statements, functions, i = [], [], 0
    while i < len(lines):
        line, where = lines[i], f"{source}:{i + 1}"
        if line.startswith("def "):
            body = [line]
            i += 1
            while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()):
                body.append(lines[i])
                i += 1
            functions.append("\n".join(body))
            continue
        if re.match(r"^(python\s*\S*\s*\(\)|\S+\s*\(\))\s*\{", line) or re.match(
            r"^python \S+\s*\{", line
        ):
            while i < len(lines) and lines[i].rstrip() != "}":
                i += 1
            i += 1
            continue
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        i += 1
        if line.strip() and not line.lstrip().startswith("#"):
            statements.append((line.strip(), where))
    return statements, functions


def split_key(key: str) -> tuple[str, str, tuple[str, ...]]:
    """VAR:pkg:append:ovr -> ("VAR:pkg", "append", ("ovr",))."""
    parts = key.split(":")
    base, rest = parts[0], parts[1:]
    if base in PACKAGE_VARS and rest and rest[0] not in ("append", "prepend", "remove"):
        base, rest = f"{base}:{rest[0]}", rest[1:]
    kind = ""
    overrides = []
    for part in rest:
        if part in ("append", "prepend", "remove"):
            kind = part
        else:
            overrides.append(part)
    return base, kind, tuple(overrides)


def class_file(name: str) -> Path | None:
    for layer in LAYERS.values():
        for folder in ("classes-recipe", "classes-global", "classes"):
            path = layer / folder / f"{name}.bbclass"
            if path.is_file():
                return path
    return None  # an upstream class: its names are upstream's business


def read_into(recipe: Recipe, path: Path) -> None:
    statements, functions = logical_lines(path.read_text(), shown(path))
    recipe.functions += functions
    for line, where in statements:
        word = line.split()[0]
        if word in ("require", "include"):
            target = line.split(None, 1)[1]
            for base in (path.parent, *LAYERS.values()):
                if (base / target).is_file():
                    read_into(recipe, base / target)
                    break
            else:
                # An upstream file (a BSP's machine include): what it names is upstream's,
                # and a missing one stops bitbake's own parse.
                if word == "require" and Path(target).name.startswith("foosball"):
                    raise UnreadableError(f"{where}: require {target}: not in our layers")
            continue
        if word in ("inherit", "INHERIT"):
            names = line.split(None, 1)[1] if word == "inherit" else ""
            for name in names.split():
                recipe.inherits.append(name)
                found = class_file(name)
                if found:
                    read_into(recipe, found)
            if word == "inherit":
                continue
        if word in ("addtask", "addhandler", "EXPORT_FUNCTIONS", "deltask", "unset"):
            continue
        match = ASSIGNMENT.match(line)
        if not match:
            raise UnreadableError(f"{where}: cannot read {line!r}")
        if match["flag"]:
            continue  # flags (do_x[depends], ...) are not names of packages
        key, kind, overrides = split_key(match["key"])
        recipe.ops.append(Op(key, kind or match["op"], overrides, match["value"], where))


def recipe_pn(path: Path) -> str:
    return path.name.split("_")[0].removesuffix(".bb").removesuffix(".bbappend")


class Store:
    """Values of one recipe for one board, as bitbake would give them (for our syntax)."""

    def __init__(self, board: str, recipe: Recipe, base: dict[str, str], overrides: set[str]):
        self.board, self.recipe, self.base = board, recipe, base
        self.overrides = overrides | {f"pn-{recipe.pn}"}
        # Keys name packages through ${PN} (RDEPENDS:${PN}-pole): match them expanded.
        for op in recipe.ops:
            op.key = op.key.replace("${PN}", recipe.pn).replace("${BPN}", recipe.pn)
        self.namespace: dict = {"d": self, "bb": BB, "oe": OE, "os": os}
        for source in recipe.functions:
            exec(source, self.namespace)  # the recipe's own helper functions
        self.seen: set[str] = set()

    def raw(self, name: str) -> str | None:
        value = self.base.get(name)
        if name == "PACKAGES":
            value = DEFAULT_PACKAGES
        ops = [op for op in self.recipe.ops if op.key == name]
        defaults = [op for op in ops if op.kind == "??=" and not op.overrides]
        for op in ops:
            if op.overrides or op.kind in ("append", "prepend", "remove", "??="):
                continue
            if op.kind == "?=":
                value = op.value if value is None else value
            elif op.kind in ("=", ":="):
                value = op.value
            elif op.kind == "+=":
                value = f"{value or ''} {op.value}"
            elif op.kind == "=+":
                value = f"{op.value} {value or ''}"
            elif op.kind == ".=":
                value = f"{value or ''}{op.value}"
            elif op.kind == "=.":
                value = f"{op.value}{value or ''}"
        if value is None and defaults:
            value = defaults[-1].value
        for op in ops:
            active = set(op.overrides) <= self.overrides
            if op.overrides and active and op.kind in ("=", ":=", "?=", "+=", "??="):
                value = op.value
        for op in ops:
            if not set(op.overrides) <= self.overrides:
                continue
            if op.kind == "append":
                value = (value or "") + op.value
            elif op.kind == "prepend":
                value = op.value + (value or "")
        if value is not None:
            removed = set()
            for op in ops:
                if op.kind == "remove" and set(op.overrides) <= self.overrides:
                    removed |= set(self.expand(op.value).split())
            if removed:
                value = " ".join(w for w in self.expand(value).split() if w not in removed)
        return value

    def getVar(self, name: str, expand: bool = True) -> str | None:  # bitbake's name
        if name in self.seen:
            raise UnreadableError(f"{self.recipe.pn}: {name} refers to itself")
        self.seen.add(name)
        try:
            value = self.raw(name)
            return self.expand(value) if expand and value is not None else value
        finally:
            self.seen.discard(name)

    def expand(self, text: str) -> str:
        for _ in range(20):
            # bitbake's order: variables, then python; an unknown ${var} stays as it is
            # (U-Boot's ${kernel_addr_r} in the boot script).
            new = VAR_REF.sub(lambda m: self.reference(m.group(0), m.group(1)), text)
            new = PYTHON_REF.sub(lambda m: str(self.python(m.group(0)[3:-1])), new)
            if new == text:
                return new
            text = new
        raise UnreadableError(f"{self.recipe.pn}: {text!r} does not settle")

    def reference(self, whole: str, name: str) -> str:
        value = self.getVar(name)
        return whole if value is None else value

    def python(self, expression: str) -> object:
        try:
            return eval(expression, self.namespace) or ""  # our own recipes' expressions
        except UnreadableError:
            raise
        except Exception as error:
            raise UnreadableError(
                f"{self.recipe.path.name}: ${{@{expression}}}: {error!r}"
            ) from error


def _contains(variable: str, checkvalues: str, truevalue: str, falsevalue: str, d: Store) -> str:
    have = set((d.getVar(variable) or "").split())
    return truevalue if set(checkvalues.split()) <= have else falsevalue


class _SkipRecipe(Exception):
    pass


BB = SimpleNamespace(
    utils=SimpleNamespace(contains=_contains),
    parse=SimpleNamespace(SkipRecipe=_SkipRecipe, mark_dependency=lambda d, f: None),
    fatal=lambda message: (_ for _ in ()).throw(UnreadableError(message)),
)
OE = SimpleNamespace(
    utils=SimpleNamespace(
        conditional=lambda v, c, t, f, d: t if d.getVar(v) == c else f,
        ifelse=lambda c, t, f: t if c else f,
    )
)


def kas_board_values(board: str) -> dict[str, str]:
    from wks import kas_local_conf, kas_value

    values = {"MACHINE": kas_value(board, "machine"), "DISTRO": "foosball"}
    for name, value in re.findall(r'^\s*([A-Z0-9_]+)\s*=\s*"([^"]*)"', kas_local_conf(board), re.M):
        values[name] = value
    return values


def layer_recipe_files(board: str) -> list[Path]:
    files = []
    for layer in LAYERS.values():
        for path in sorted(layer.rglob("*.bb")) + sorted(layer.rglob("*.bbappend")):
            parts = path.relative_to(layer).parts
            if parts[0] == "dynamic-layers" and parts[1] not in BOARD_COLLECTIONS[board]:
                continue
            files.append(path)
    return files


def board_base(board: str) -> tuple[dict[str, str], Recipe]:
    """The configuration every recipe sees: our distro conf (and machine conf) with the
    board's kas values; returned as plain values plus the conf as a pseudo recipe."""
    conf = Recipe(REPO / "meta-foosball/conf/distro/foosball.conf", "conf")
    read_into(conf, conf.path)
    values = kas_board_values(board)
    machine_conf = REPO / f"meta-foosball/conf/machine/{values['MACHINE']}.conf"
    if machine_conf.is_file():
        read_into(conf, machine_conf)
    values |= {
        "FOOSBALL_REPO_DIR": str(REPO),
        "FOOSBALL_IMAGE_CONFIG_DIR": str(REPO / "image-config"),
        "FOOSBALL_KERNEL_FRAGMENT_DIR": str(REPO / "meta-foosball/files/kernel"),
        "TOPDIR": "/build",
    }
    return values, conf


def board_overrides(board: str) -> set[str]:
    recorded = manifest(board)["boot_script"]["OVERRIDES"].split(":")
    return {o for o in recorded if o and not o.startswith("pn-")}


def words(value: str) -> list[str]:
    """A dependency list without version constraints: "a (>= 1) b" -> [a, b]."""
    return re.sub(r"\([^)]*\)", " ", value).split()


@dataclass
class Named:
    name: str
    # "build" (PROVIDES) | "runtime" (RPROVIDES/packages) | "recipe" | "preferred"
    # (the provider named by PREFERRED_PROVIDER_<virtual>)
    kind: str
    where: str


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def names_of(store: Store) -> list[Named]:
    """The names one recipe (or our conf) asks for, by the variable that names them."""
    asked = []
    where = shown(store.recipe.path)
    for key in sorted({op.key for op in store.recipe.ops}):
        base_name = key.split(":")[0]
        if base_name in BUILD_NAMES:
            kind = "build"
        elif base_name in RUNTIME_NAMES or base_name in ("RDEPENDS", "RRECOMMENDS"):
            kind = "runtime"
        elif base_name.startswith("PREFERRED_PROVIDER_"):
            kind = "preferred"
        elif base_name.startswith("PREFERRED_RPROVIDER_"):
            kind = "recipe"
            asked.append(Named(base_name.split("_", 2)[2], "runtime", f"{where} {key}"))
        elif base_name == "RAUC_BUNDLE_SLOTS":
            for slot in words(store.getVar(key) or ""):
                image = store.getVar(f"RAUC_SLOT_{slot}") or f"RAUC_SLOT_{slot} (unset)"
                asked.append(Named(image, "recipe", f"{where} RAUC_SLOT_{slot}"))
            continue
        else:
            continue
        for name in words(store.getVar(key) or ""):
            if "${" in name:
                raise UnreadableError(f"{where} {key}: {name} names a variable set nowhere")
            asked.append(Named(name, kind, f"{where} {key}"))
    return asked


def reached(board: str, stores: list[Store], also: list[str]) -> list[Store]:
    """Our recipes the board's targets pull in (through the names they ask for), as
    `bitbake -g` of those targets resolves them: a recipe of ours that parses on this
    board but that no target needs (the kiosk on the vision board) is not resolved there."""
    by_name: dict[str, Store] = {}
    for store in stores:
        by_name[store.recipe.pn] = store
        if not {"image", "core-image", "bundle", "nopackages"} & set(store.recipe.inherits):
            for package in words(store.getVar("PACKAGES") or ""):
                by_name[package] = store
                for alias in words(store.getVar(f"RPROVIDES:{package}") or ""):
                    by_name[alias] = store
    targets = [f"foosball-image-{board}", f"foosball-image-{board}-dev", f"foosball-bundle-{board}"]
    targets += also  # recipes handed in to be checked as if a target needed them
    todo = [by_name[t] for t in targets if t in by_name]
    seen: list[Store] = []
    while todo:
        store = todo.pop()
        if store in seen:
            continue
        seen.append(store)
        todo += [by_name[n.name] for n in names_of(store) if n.name in by_name]
    return seen


def read_board(
    board: str, extra: list[Path] = ()
) -> tuple[list[Named], set[str], set[str], set[str]]:
    """Names our files ask for on this board, and what our own recipes provide:
    (asked, provides, rprovides, recipe names)."""
    base, conf = board_base(board)
    overrides = board_overrides(board)
    conf_store = Store(board, conf, base, overrides)
    for op in conf.ops:
        if not op.overrides and op.kind in ("=", "?=", ":="):
            base.setdefault(op.key, op.value)
    asked: list[Named] = []
    provides: set[str] = set()
    rprovides: set[str] = set()
    pns: set[str] = set()
    appends: list[Recipe] = []
    stores = []
    for path in [*layer_recipe_files(board), *extra]:
        recipe = Recipe(path, recipe_pn(path))
        read_into(recipe, path)
        if path.suffix == ".bbappend":
            appends.append(recipe)
            continue
        store = Store(board, recipe, {**base, "PN": recipe.pn, "BPN": recipe.pn}, overrides)
        only_for = store.getVar("FOOSBALL_IMAGE_BOARD") or store.getVar("FOOSBALL_BUNDLE_BOARD")
        if only_for and only_for != board:
            continue  # skipped on this board (the recipe's anonymous python says so)
        pn = recipe.pn
        pns.add(pn)
        provides.add(pn)
        provides |= set(words(store.getVar("PROVIDES") or ""))
        if "native" in recipe.inherits or "native" in (store.getVar("BBCLASSEXTEND") or ""):
            provides.add(f"{pn}-native")
        if not {"image", "core-image", "bundle", "nopackages"} & set(recipe.inherits):
            for package in words(store.getVar("PACKAGES") or ""):
                rprovides.add(package)
                rprovides |= set(words(store.getVar(f"RPROVIDES:{package}") or ""))
        stores.append(store)
    asked += names_of(conf_store)
    for store in reached(board, stores, [recipe_pn(path) for path in extra]):
        asked += names_of(store)
    for append in appends:
        pattern = re.escape(append.pn).replace("%", ".*")
        asked.append(Named(f"re:^{pattern}$", "recipe", f"{shown(append.path)} (bbappend)"))
    return asked, provides, rprovides, pns


def unprovided(board: str, extra: list[Path] = ()) -> list[str]:
    """Every name our layers ask for on this board that nothing provides, with where."""
    record = manifest(board)
    asked, provides, rprovides, pns = read_board(board, extra)
    up_provides, up_rprovides = set(record["provides"]), set(record["rprovides"])
    up_recipes = set(record["recipes"])
    dynamic = [re.compile(p) for p in record["packages_dynamic"]]
    problems = []
    for named in asked:
        if named.kind == "preferred":
            # bitbake ignores a preference for a name no layer of this board provides.
            virtual = named.where.rsplit("PREFERRED_PROVIDER_", 1)[1].split(":")[0]
            ok = virtual not in provides | up_provides or named.name in provides | up_provides
        elif named.kind == "build":
            ok = named.name in provides or named.name in up_provides
        elif named.kind == "runtime":
            ok = (
                named.name in rprovides
                or named.name in up_rprovides
                or any(p.fullmatch(named.name) for p in dynamic)
            )
        elif named.name.startswith("re:"):
            ok = any(re.match(named.name[3:], pn) for pn in up_recipes | pns)
        else:
            ok = named.name in pns or named.name in up_recipes
        if not ok:
            problems.append(
                f"{board}: nothing provides {named.kind} name {named.name!r} ({named.where})"
            )
    return problems
