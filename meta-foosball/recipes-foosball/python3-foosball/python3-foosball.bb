SUMMARY = "The foosball opponent's agents, wire protocol and tools (Python)"
DESCRIPTION = "The Python distribution 'foosball', split by board role so each \
image carries only its agents and their dependencies."
HOMEPAGE = "https://github.com/foosball-opponent"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

# The source is this very repository (meta-foosball sits beside python/), so the
# image built from a commit carries the Python code of that same commit: no
# SRCREV to bump, nothing to drift. bitbake checksums every file under python/,
# so a change there rebuilds this recipe and nothing else.
PV = "0.1.0"
SRC_URI = "file://${FOOSBALL_REPO_DIR}/python/"
S = "${WORKDIR}${FOOSBALL_REPO_DIR}/python"

inherit python_setuptools_build_meta

FOOSBALL_SITE = "${PYTHON_SITEPACKAGES_DIR}/foosball"

do_install:append() {
    # The table geometry every agent reads (board.toml: [table] geometry).
    install -d ${D}${sysconfdir}/foosball
    install -m 0644 ${S}/foosball/data/table.json ${D}${sysconfdir}/foosball/table.json
}

# Which modules each package ships: image-config/python-modules.toml, the one table (the
# laptop-side reader foosball.rig.image_files reads it too, and
# tests/images/test_python_modules.py runs these functions against it). Role packages
# first: FILES are matched in PACKAGES order. Code no package lists (the simulator, the
# rig, the offline evaluations) is deleted at install and ships to no board.
PACKAGES =+ "${PN}-pole ${PN}-vision ${PN}-strategy ${PN}-panels"
FOOSBALL_MODULE_TABLE = "${FOOSBALL_REPO_DIR}/image-config/python-modules.toml"

def foosball_toml_subset(text):
    """The TOML the table is written in ([name] headers, key = ["...", ...] lists,
    comments), for build hosts whose Python has no tomllib (before 3.11: scarthgap supports
    3.8). tests/images/test_python_modules.py holds it to tomllib on the table."""
    import re
    body = re.sub(r"#[^\n]*", "", text)
    sections = re.findall(r"^\[(\w+)\][^\n]*\n(.*?)(?=^\[|\Z)", body, re.M | re.S)
    return {name: {key: re.findall(r'"([^"]*)"', values)
                   for key, values in re.findall(r"^(\w+)\s*=\s*\[(.*?)\]", content, re.M | re.S)}
            for name, content in sections}

def foosball_module_table(d):
    """Image package ("common" is ${PN}) -> its entries, read at parse time."""
    path = d.getVar("FOOSBALL_MODULE_TABLE")
    bb.parse.mark_dependency(d, path)  # a change to the table reparses the recipe
    with open(path, encoding="utf-8") as table_file:
        text = table_file.read()
    try:
        import tomllib
    except ModuleNotFoundError:
        table = foosball_toml_subset(text)
    else:
        table = tomllib.loads(text)
    table.pop("boards")
    return {package: section["modules"] for package, section in table.items()}

def foosball_entry_matches(relative, entry):
    """The file at `relative` (under foosball/) belongs to `entry`: the entry itself (a
    data file, or a folder and all below), <entry>.* beside it, or its bytecode. The same
    rule as foosball.rig.image_files.entry_matches and the globs below."""
    parent, _, name = entry.rpartition("/")
    prefix = parent + "/" if parent else ""
    return (relative == entry
            or relative.startswith(entry + "/")
            or (relative.startswith(prefix + name + ".") and "/" not in relative[len(prefix):])
            or (relative.startswith(prefix + "__pycache__/" + name + ".")
                and relative.count("/") == prefix.count("/") + 1))

def foosball_module_files(d, package):
    site = d.getVar("FOOSBALL_SITE")
    files = []
    for entry in foosball_module_table(d)[package]:
        parent, _, name = entry.rpartition("/")
        base = site + "/" + parent if parent else site
        files += [site + "/" + entry, base + "/" + name + ".*", base + "/__pycache__/" + name + ".*"]
    return " ".join(files)

python foosball_prune_unlisted() {
    import os
    site = d.expand("${D}${FOOSBALL_SITE}")
    entries = [entry for modules in foosball_module_table(d).values() for entry in modules]
    for top, _, names in os.walk(site, topdown=False):
        for name in names:
            relative = os.path.relpath(os.path.join(top, name), site)
            if not any(foosball_entry_matches(relative, entry) for entry in entries):
                os.remove(os.path.join(top, name))
        if top != site and not os.listdir(top):
            os.rmdir(top)
}
do_install[postfuncs] += "foosball_prune_unlisted"

FILES:${PN}-pole = "${@foosball_module_files(d, 'pole')}"
FILES:${PN}-vision = "${@foosball_module_files(d, 'vision')}"
FILES:${PN}-strategy = "${@foosball_module_files(d, 'strategy')}"
FILES:${PN}-panels = "${@foosball_module_files(d, 'panels')}"
# ${PN} also takes the rest of site-packages (setuptools3-base): the dist-info.
FILES:${PN} += "${@foosball_module_files(d, 'common')}"
FILES:${PN} += "${sysconfdir}/foosball"

# python3-jeepney: the update agent's D-Bus client to RAUC (foosball.ota, on every board).
RDEPENDS:${PN} = "python3-asyncio python3-cbor2 python3-core python3-jeepney python3-json \
    python3-logging python3-numpy python3-psutil python3-tomllib"
RDEPENDS:${PN}-panels = "${PN} python3-aiohttp"
RDEPENDS:${PN}-pole = "${PN} ${PN}-panels python3-pysoem"
RDEPENDS:${PN}-vision = "${PN} python3-opencv"
RDEPENDS:${PN}-strategy = "${PN} ${PN}-panels"
