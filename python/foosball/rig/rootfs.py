"""A small Debian root standing in for a board's image, booted under systemd-nspawn.

The debootstrap root is built once and cached under ROOT_CACHE (named after what went into
it, so changing the package list builds a new one): systemd, and the third-party Python
packages the images install (python3-foosball's RDEPENDS, as Debian packages). Each boot
mounts a writable overlay of it, into which the board's own files are installed the way
the recipes install them (foosball.rig.booted); the cached root itself is never modified.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from foosball.rig.image_files import copy_board_files

REPO = Path(__file__).resolve().parents[3]
UNITS = REPO / "meta-foosball" / "recipes-foosball" / "foosball-agents" / "files"
# Not the systemd tests' old /var/cache/foosball-test-root: a tree of before this module
# removes every root there but its own, and the two would rebuild each other's for ever.
ROOT_CACHE = Path("/var/cache/foosball-board-root")
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# What the images bring for python3-foosball (its RDEPENDS: the common package, the panels'
# aiohttp, the vision board's opencv), as Debian packages; bookworm has cbor2 5.4.6, the
# floor python/pyproject.toml declares. pysoem has no Debian package: the pole board gets
# the venv's build (foosball.rig.booted). One root serves the three boards: each board's
# overlay holds only its own share of the foosball package, which is what differs.
# Bookworm's OpenCV is 4.6, the images' 4.9: the vision code keeps to what both have
# (tests/vision/test_markers_on_board_opencv.py runs it on this root's).
PACKAGES = ("systemd", "dbus", "python3", "python3-numpy", "python3-psutil", "python3-cbor2",
            "python3-jeepney", "python3-aiohttp", "python3-opencv", "iproute2")
USER = "foosball"
# As foosball-base.bb's USERADD_PARAM makes it.
USERADD = ("--system", "--home-dir", "/data/foosball", "--no-create-home", "--shell",
           "/sbin/nologin", "--user-group")
SITE_PACKAGES = "usr/lib/python3/dist-packages"
UNIT_DIR = "usr/lib/systemd/system"  # ${systemd_system_unitdir}
ENTRY_POINT = """#!/usr/bin/python3
import sys
from foosball.cli import main
sys.exit(main())
"""


def debian_root() -> Path:
    """The cached debootstrap root with the agents' user, built on first use (~1 min)."""
    recipe = " ".join((SUITE, MIRROR, *PACKAGES, *USERADD, USER))
    root = ROOT_CACHE / f"{SUITE}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"
    done = root.with_name(root.name + ".done")
    ROOT_CACHE.mkdir(parents=True, exist_ok=True)
    with open(ROOT_CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return root
        for stale in ROOT_CACHE.iterdir():  # roots of older package lists
            if stale.name != ".lock":
                _remove(stale)
        partial = root.with_name(root.name + ".partial")
        started = time.monotonic()
        _run(["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
              SUITE, str(partial), MIRROR], what="debootstrap")
        _run(["chroot", str(partial), "useradd", *USERADD, USER], what="useradd")
        partial.rename(root)
        done.write_text(f"built in {time.monotonic() - started:.0f} s\n")
        return root


@contextmanager
def overlay(lower: Path, scratch: Path) -> Iterator[Path]:
    """A writable overlay of `lower`; everything written to it is gone on exit. The upper
    layer is a tmpfs: overlayfs refuses an upper layer on overlayfs (a CI container's /)."""
    scratch.mkdir(parents=True)
    _run(["mount", "-t", "tmpfs", "-o", "mode=0700", "tmpfs", str(scratch)], what="mount")
    try:
        upper, work, merged = (scratch / name for name in ("upper", "work", "merged"))
        for path in (upper, work, merged):
            path.mkdir()
        _run(["mount", "-t", "overlay", "overlay", "-o",
              f"lowerdir={lower},upperdir={upper},workdir={work}", str(merged)], what="mount")
        try:
            yield merged
        finally:
            subprocess.run(["umount", str(merged)], check=True)
    finally:
        subprocess.run(["umount", str(scratch)], check=True)
        scratch.rmdir()


def install_package(root: Path, board: str) -> None:
    """The board's share of the package (the files python3-foosball's packages give it,
    foosball.rig.image_files) and /usr/bin/foosball, compiled as the image ships them."""
    copy_board_files(board, root / SITE_PACKAGES)
    entry = root / "usr/bin/foosball"
    entry.write_text(ENTRY_POINT)
    entry.chmod(0o755)
    # The image ships compiled modules; the units' ProtectSystem=strict forbids writing them.
    _run(["chroot", str(root), "python3", "-m", "compileall", "-q", f"/{SITE_PACKAGES}/foosball"],
         what="compileall")


def install_units(root: Path, board_toml: str, agents: Iterable[str],
                  dropins: dict[str, list[Path]] | None = None) -> None:
    """What foosball-agents.bb installs: board.toml, the repository's unit files unchanged,
    one foosball-agent@NAME wanted by foosball.target per agent with its drop-ins, and
    foosball.target enabled."""
    (root / "etc/foosball").mkdir(parents=True, exist_ok=True)
    (root / "etc/foosball/board.toml").write_text(board_toml)
    unit_dir = root / UNIT_DIR
    for name in ("foosball-agent@.service", "foosball.target"):
        shutil.copy(UNITS / name, unit_dir / name)
    wants = unit_dir / "foosball.target.wants"
    wants.mkdir()
    for agent in agents:
        unit = f"foosball-agent@{agent}.service"
        (wants / unit).symlink_to("../foosball-agent@.service")
        for dropin in (dropins or {}).get(agent, []):
            (unit_dir / f"{unit}.d").mkdir(exist_ok=True)
            shutil.copy(dropin, unit_dir / f"{unit}.d" / dropin.name)
    _run(["systemctl", f"--root={root}", "enable", "foosball.target"], what="systemctl enable")


def install_agents(root: Path, board: str, board_toml: str, agents: tuple[str, ...]) -> None:
    """The board's share of the package and the units of `agents` (the systemd tests)."""
    install_package(root, board)
    install_units(root, board_toml, agents)


def user_ids(root: Path, user: str = USER) -> tuple[int, int]:
    for line in (root / "etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise LookupError(f"no user {user} in {root}/etc/passwd")


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        log = (result.stdout + result.stderr).strip().splitlines()[-30:]
        raise RuntimeError(f"{what} failed ({result.returncode}): {' '.join(command)}\n"
                           + "\n".join(log))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        # An interrupted debootstrap leaves its /proc and /sys mounted in the target.
        for mount_point in sorted(mounts_under(path), reverse=True):
            subprocess.run(["umount", "--lazy", mount_point], check=False)
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        os.unlink(path)


def mounts_under(path: Path) -> list[str]:
    prefix = str(path.resolve()) + "/"
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    return [p for p in points if p.startswith(prefix)]
