"""The rig's boards as booted machines: one systemd-nspawn container per board.

Each board boots an overlay of the cached Debian root (foosball.rig.rootfs: systemd and
the third-party Python packages the images install) holding only that board's files, as
the recipes install them:

- its share of the foosball package (image-config/python-modules.toml, the table
  python3-foosball.bb reads, through foosball.rig.image_files) and /usr/bin/foosball;
  pysoem (the venv's build) on the pole board;
- /etc/foosball/board.toml (the rig's board file, with the board's own paths) and
  /etc/foosball/table.json; foosball-agent@.service and foosball.target from the repository,
  one unit per agent section of board.toml with its drop-ins (foosball-agents.bb's
  FOOSBALL_NON_AGENT_SECTIONS and FOOSBALL_AGENT_DROPINS, read from the recipe);
- the foosball user and /data laid out by foosball-base's tmpfiles.d entry; /data is a
  directory of the run dir bound in (wire key, calibration, matches, panel token).

systemd starts the agents (foosball.target), restarts one that exits (Restart=always) and
kills a hung one (WatchdogSec=). The container joins the board's network namespace of the
rig's NamespaceLan, so the LAN and the pole board's EtherCAT veth are the namespaced mode's.

What the rig adds that no image has, in one drop-in (RIG_DROPIN): each agent's output
appended to <run_dir>/logs/<agent>.log (the host reads the agents' logs as in the other
modes) and unbuffered. What the images have that a container cannot: the data partition's
mount (a bind here), the persistent journal's mount, and the hardware watchdog systemd pets
(RuntimeWatchdogSec=: no /dev/watchdog in a container).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

from foosball.rig import rootfs
from foosball.rig.nspawn import Container, Machine

RECIPES = rootfs.REPO / "meta-foosball"
AGENTS_RECIPE = RECIPES / "recipes-foosball" / "foosball-agents" / "foosball-agents.bb"
BASE_FILES = RECIPES / "recipes-core" / "foosball-base" / "files"
DATA = "/data/foosball"  # the board's writable data (board.toml paths inside the board)
CAMERA_DIR = "/srv/camera"  # the simulated camera's socket, bound in on the vision board
LOG_DIR = "/var/log/foosball-rig"
RIG_DROPIN = f"""\
# The simulated rig only (foosball.rig.booted): each agent's output into the rig's logs.
[Service]
StandardOutput=append:{LOG_DIR}/%i.log
StandardError=inherit
Environment=PYTHONUNBUFFERED=1
"""
# Where the host's root cannot raise a hard limit (no CAP_SYS_RESOURCE: a CI container),
# a container's PID 1 keeps RLIMIT_RTPRIO 0 and no unit's LimitRTPRIO= takes effect: then
# CAP_SYS_NICE, which lets a process take SCHED_FIFO whatever its limit, stands in for it.
RTPRIO_STAND_IN = """\
# This host's root cannot raise the real-time priority limit (no CAP_SYS_RESOURCE), so the
# units' LimitRTPRIO= is 0 here: CAP_SYS_NICE stands in for it (the rig only).
AmbientCapabilities=CAP_SYS_NICE
CapabilityBoundingSet=CAP_SYS_NICE
"""
CAP_SYS_RESOURCE = 24
# The pole board's motor driver drop-in (realtime.conf) asks for these beyond what
# systemd-nspawn gives a container by default.
EXTRA_CAPABILITIES = {"pole": ("CAP_IPC_LOCK", "CAP_NET_ADMIN")}


def booted_unavailable() -> str | None:
    """Why the booted-boards mode cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root: containers need root"
    missing = [tool for tool in ("systemd-nspawn", "nsenter", "debootstrap", "ip")
               if shutil.which(tool) is None]
    if missing:
        return f"no {', '.join(missing)} (apt install systemd-container debootstrap)"
    return None


# -- what the recipes say --------------------------------------------------------------
def _recipe_value(recipe: Path, variable: str) -> str:
    """A plain `VAR = "value"` assignment of a recipe (continuation lines joined)."""
    text = recipe.read_text().replace("\\\n", " ")
    match = re.search(rf'^{re.escape(variable)}\s*=\s*"([^"]*)"', text, re.MULTILINE)
    if match is None:
        raise LookupError(f"{recipe.name} sets no {variable}")
    return match.group(1)


def recipe_agents(board_toml: str) -> list[str]:
    """The agents foosball-agents.bb enables for a board file: its sections but the
    FOOSBALL_NON_AGENT_SECTIONS."""
    ignored = _recipe_value(AGENTS_RECIPE, "FOOSBALL_NON_AGENT_SECTIONS").split()
    return [section for section in tomllib.loads(board_toml) if section not in ignored]


def recipe_dropins(agents: list[str]) -> dict[str, list[Path]]:
    """FOOSBALL_AGENT_DROPINS (agent:file pairs) for the agents the board runs."""
    files = AGENTS_RECIPE.parent / "files"
    dropins: dict[str, list[Path]] = {}
    for pair in _recipe_value(AGENTS_RECIPE, "FOOSBALL_AGENT_DROPINS").split():
        agent, _, name = pair.partition(":")
        if agent in agents:
            dropins.setdefault(agent, []).append(files / name)
    return dropins


# -- the boards ------------------------------------------------------------------------
class BootedBoards:
    """The containers of the rig's boards. `netns(board)`: the network namespace each
    joins; `log_dir`: where the agents' logs go on the host."""

    def __init__(self, run_dir: Path, netns: Callable[[str], str], log_dir: Path) -> None:
        self.run_dir = run_dir
        self.netns = netns  # also each board's machine name: unique per rig
        self.log_dir = log_dir
        self.camera_dir = run_dir / "camera"
        self.containers: dict[str, Container] = {}
        self.machines: dict[str, Machine] = {}
        self.agents: dict[str, str] = {}  # agent -> board
        self._mounts = contextlib.ExitStack()

    def data_dir(self, board: str) -> Path:
        return self.run_dir / "boards" / board / "data"

    def host_path(self, board: str, inside: str) -> Path:
        """Where a path of the board's /data is on the host."""
        return self.data_dir(board) / Path(inside).relative_to("/data")

    def prepare(self, board: str, board_toml: str, key_file: Path) -> None:
        """The board's root (an overlay of the cached Debian root) with its files, and its
        /data with the wire key. Call `boot` after every board is prepared."""
        base = rootfs.debian_root()
        scratch = self.run_dir / "boards" / board / "root"
        root = self._mounts.enter_context(rootfs.overlay(base, scratch))
        rootfs.install_package(root, board)
        if board == "pole":
            _install_pysoem(root)
        (root / "etc/foosball").mkdir(parents=True, exist_ok=True)
        shutil.copy(rootfs.REPO / "python/foosball/data/table.json",
                    root / "etc/foosball/table.json")
        agents = recipe_agents(board_toml)
        rootfs.install_units(root, board_toml, agents, recipe_dropins(agents))
        tmpfiles = root / "usr/lib/tmpfiles.d"
        tmpfiles.mkdir(parents=True, exist_ok=True)
        shutil.copy(BASE_FILES / "foosball-data.conf", tmpfiles / "foosball-data.conf")
        rig_dropin = root / "etc/systemd/system/foosball-agent@.service.d/50-rig.conf"
        rig_dropin.parent.mkdir(parents=True, exist_ok=True)
        rig_dropin.write_text(RIG_DROPIN + ("" if _can_raise_limits() else RTPRIO_STAND_IN))
        for agent in agents:
            self.agents[agent] = board
        uid, gid = rootfs.user_ids(root)
        data = self.host_path(board, DATA)
        data.mkdir(parents=True)
        key = data / "wire.key"
        shutil.copy(key_file, key)
        (data / "calibration").mkdir()
        for path in (data, key, data / "calibration"):
            os.chown(path, uid, gid)
        key.chmod(0o600)
        binds = {self.data_dir(board): "/data", self.log_dir: LOG_DIR}
        if board == "vision":
            self.camera_dir.mkdir(exist_ok=True)
            binds[self.camera_dir] = CAMERA_DIR
        self.containers[board] = Container(
            root, self.netns(board), self.netns(board), binds,
            self.log_dir / f"{board}-console.log", EXTRA_CAPABILITIES.get(board, ()))

    def boot(self, preexec_fn: Callable[[], object] | None = None
             ) -> dict[str, subprocess.Popen[bytes]]:
        """Start every prepared board and wait until each one's systemd is up."""
        started = {board: c.start(preexec_fn) for board, c in self.containers.items()}
        for board, container in self.containers.items():
            # The agents start as the boot goes on; the rig's callers wait for them.
            self.machines[board] = container.wait_booted(finished=False)
        return started

    def machine(self, agent: str) -> Machine:
        if agent not in self.agents:
            raise KeyError(f"no board runs {agent!r}: {sorted(self.agents)}")
        return self.machines[self.agents[agent]]

    @staticmethod
    def unit(agent: str) -> str:
        return f"foosball-agent@{agent}.service"

    def main_pid(self, agent: str) -> int:
        """The agent's process as the board's systemd knows it (0: not running)."""
        return int(self.machine(agent).show(self.unit(agent), "MainPID") or 0)

    def host_pid(self, agent: str) -> int | None:
        """The agent's main process as this host sees it: its board's systemd names it in
        the board's PID namespace, and /proc/<pid>/status's NSpid line gives both."""
        inner = self.main_pid(agent)
        if inner == 0:
            return None
        unit = "/" + self.unit(agent)
        for proc in Path("/proc").glob("[0-9]*"):
            with contextlib.suppress(OSError):
                nspid = next(line for line in (proc / "status").read_text().splitlines()
                             if line.startswith("NSpid:")).split()[1:]
                if (len(nspid) > 1 and int(nspid[-1]) == inner
                        and unit in (proc / "cgroup").read_text()):
                    return int(nspid[0])
        return None

    def signal(self, agent: str, signum: int) -> float:
        """To the agent's main process, from this host (as a person's kill would: no
        systemctl in between to delay it); returns when it was sent (monotonic). Through
        the board's systemd when this host cannot find the process."""
        pid = self.host_pid(agent)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
                return time.monotonic()
        result = self.machine(agent).run(
            "systemctl", "kill", "--kill-whom=main", f"--signal={signal.Signals(signum).name}",
            self.unit(agent), check=False)
        if result.returncode != 0 and signum != signal.SIGCONT:
            # SIGCONT to a stopped agent that systemd's watchdog already killed (and is
            # restarting) has nothing left to wake: not an error.
            raise RuntimeError(f"signal {signum} to {agent}: {result.stderr.strip()}")
        return time.monotonic()

    def stop(self, agent: str) -> None:
        self.machine(agent).run("systemctl", "stop", self.unit(agent), check=False,
                                timeout=60.0)

    def start(self, agent: str) -> None:
        result = self.machine(agent).run("systemctl", "start", "--no-block", self.unit(agent),
                                         check=False)
        if result.returncode != 0:
            raise RuntimeError(f"starting {agent}: {result.stderr.strip()}")

    def active(self, agent: str) -> str:
        return self.machine(agent).systemctl("is-active", self.unit(agent))

    def restarts(self, agent: str) -> int:
        return int(self.machine(agent).show(self.unit(agent), "NRestarts") or 0)

    def halt(self) -> dict[str, int | None]:
        """Halt every board (systemd stops the agents), then unmount their roots."""
        codes = {f"{board} board": container.halt()
                 for board, container in self.containers.items()}
        self._mounts.close()
        return codes

    def describe(self) -> str:
        return ("booted boards: " + ", ".join(
            f"{board} (systemd-nspawn machine {c.name})" for board, c in self.containers.items()))


def _install_pysoem(root: Path) -> None:
    """pysoem for the pole board: the venv's build (recipes/ builds it for the image; Debian
    has no package)."""
    import pysoem

    source = Path(pysoem.__file__).parent
    shutil.copytree(source, root / rootfs.SITE_PACKAGES / "pysoem",
                    ignore=shutil.ignore_patterns("__pycache__"))


def _can_raise_limits() -> bool:
    with open("/proc/self/status") as status:
        effective = next(line for line in status if line.startswith("CapEff:")).split()[1]
    return bool(int(effective, 16) >> CAP_SYS_RESOURCE & 1)
