"""Real RAUC on this machine: development keys made at test time, signed bundles, and
simulated boards, each with its own private system bus, `rauc service`, two file slots
and the simulated U-Boot environment (uboot_env.py) as RAUC's custom bootloader backend.

A simulated board's power-on is what U-Boot and systemd do on the real one: the boot
chooser picks a slot (spending an attempt), the slot's image says what root filesystem
that is (its version, whether its agents start), the bus and RAUC start (told which slot
booted), then the board's agent and its update agent (`foosball agent run`, real
processes on the agent LAN, UDP on loopback). A power-off kills every process at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from jeepney import MatchRule
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import unwrap_msg

from foosball.ota.rauc import INSTALLER, RaucClient
from tests.ota.uboot_env import choose_boot_slot, read_env

# RAUC's bootloader backend: a shell script, run by RAUC for every slot at each status read
UBOOT_BACKEND = Path(__file__).resolve().parent / "uboot_env.sh"
STARTUP_S = 60.0  # the longest a bus or RAUC may take to come up on a loaded 2-core machine

IMAGE_SIZE = 256 * 1024  # a slot image: a JSON header line, then padding
SLOT_NAMES = {"A": "rootfs.0", "B": "rootfs.1"}
# Each simulated board runs one real agent that needs no hardware, whose heartbeats its
# update agent judges the boot by.
BOARD_AGENT = {"pole": "pole_driver", "strategy": "strategy", "vision": "supervisory_panel"}


def rauc_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root: RAUC mounts bundles on loop devices (CI runs as root)"
    for tool, package in (("rauc", "rauc"), ("dbus-daemon", "dbus"),
                          ("mksquashfs", "squashfs-tools"), ("openssl", "openssl")):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (apt package {package}; ./tools/setup installs it as root)"
    return None


def dm_verity_skip_reason() -> str | None:
    """Why a verity bundle cannot be installed here, or None. RAUC opens a verity bundle's
    payload through the kernel's device-mapper (dm-verity); the boards have it, a CI
    container's kernel may not."""
    reason = rauc_skip_reason()
    if reason:
        return reason
    misc = Path("/proc/misc").read_text() if Path("/proc/misc").exists() else ""
    if "device-mapper" not in misc.split():
        modules = ("and it loads no modules" if not Path("/proc/modules").exists()
                   else "and no dm-mod module is loaded")
        return (f"needs device-mapper with its verity target (RAUC opens a verity bundle "
                f"through dm-verity): kernel {platform.release()} has no device-mapper (none "
                f"in /proc/misc, no /dev/mapper/control) {modules}")
    dmsetup = shutil.which("dmsetup")
    if dmsetup is None:
        return "needs `dmsetup` (apt package dmsetup) to see whether dm-verity is there"
    targets = subprocess.run([dmsetup, "targets"], capture_output=True, text=True)
    names = [line.split()[0] for line in targets.stdout.splitlines() if line.split()]
    if targets.returncode != 0 or "verity" not in names:
        said = targets.stderr.strip() or ", ".join(names) or "nothing"
        return f"needs the kernel's dm-verity target: `dmsetup targets` says {said}"
    return None


def needs_rauc() -> pytest.MarkDecorator:
    reason = rauc_skip_reason()
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def run(*command: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))}: {result.stderr.strip()}")
    return result.stdout


# -- keys and bundles ------------------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    """A development CA and a code-signing leaf under it: made now, never kept."""

    ca_cert: Path
    signing_key: Path
    signing_cert: Path


def make_keys(directory: Path, name: str) -> Keys:
    """As tools/rauc-dev-keys makes them (EC P-256, codeSigning)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "codesign.ext").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=critical,codeSigning\n")
    subject = f"/O=Foosball opponent/OU=DEVELOPMENT ONLY - tests/CN={name}"
    run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key.pem",
        cwd=directory)
    run("openssl", "req", "-x509", "-new", "-key", "ca.key.pem", "-days", "2", "-sha256",
        "-subj", subject + " CA", "-out", "ca.cert.pem", cwd=directory)
    run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out",
        "signing.key.pem", cwd=directory)
    run("openssl", "req", "-new", "-key", "signing.key.pem", "-subj", subject + " signer",
        "-out", "signing.csr", cwd=directory)
    run("openssl", "x509", "-req", "-in", "signing.csr", "-CA", "ca.cert.pem", "-CAkey",
        "ca.key.pem", "-CAcreateserial", "-days", "2", "-sha256", "-extfile", "codesign.ext",
        "-out", "signing.cert.pem", cwd=directory)
    return Keys(directory / "ca.cert.pem", directory / "signing.key.pem",
                directory / "signing.cert.pem")


def image_bytes(version: str, agents_start: bool = True, boots: bool = True,
                size: int = IMAGE_SIZE) -> bytes:
    """A root filesystem as far as the simulated boot cares: its version, whether it boots
    at all (a kernel that hangs) and whether its agents start. Random padding, so every
    image differs and compression cannot hide a half-written one."""
    header = (json.dumps({"version": version, "agents_start": agents_start, "boots": boots})
              + "\n").encode()
    return header + os.urandom(size - len(header))


def make_bundle(out: Path, keys: Keys, compatible: str, version: str, *,
                agents_start: bool = True, boots: bool = True,
                image_size: int = IMAGE_SIZE, bundle_format: str = "plain") -> Path:
    """A signed bundle with one rootfs image, also kept beside it as <out>.img. Plain by
    default: the boards take only verity bundles, which need device-mapper at install
    (dm_verity_skip_reason); the simulated boards take both."""
    work = out.with_suffix(".d")
    work.mkdir(parents=True)
    image = image_bytes(version, agents_start, boots, image_size)
    out.with_suffix(".img").write_bytes(image)
    (work / "rootfs.img").write_bytes(image)
    (work / "manifest.raucm").write_text(
        f"[update]\ncompatible={compatible}\nversion={version}\n\n"
        f"[bundle]\nformat={bundle_format}\n\n"
        "[image.rootfs]\nfilename=rootfs.img\n")
    run("rauc", "bundle", "--cert", keys.signing_cert, "--key", keys.signing_key,
        work, out)
    shutil.rmtree(work)
    return out


def tampered_copy(bundle: Path, out: Path, at: int | None = None) -> Path:
    """The bundle with one byte changed (by default in its payload; the signature, at the
    end, left as it was)."""
    data = bytearray(bundle.read_bytes())
    data[len(data) // 3 if at is None else at] ^= 0xFF
    out.write_bytes(bytes(data))
    return out


# -- processes ---------------------------------------------------------------------------------


def start(command: list[str | Path], log: Path, env: dict[str, str] | None = None) \
        -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([str(c) for c in command], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)


def kill(process: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL the process and its children: a power cut."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def wait_for(what: str, condition: Callable[[], object], timeout_s: float,
              period_s: float = 0.05) -> object:
    """Poll `condition` until it is true (its value returned) or fail naming `what`."""
    deadline = time.monotonic() + timeout_s
    pause = threading.Event()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        pause.wait(period_s)


def start_bus(config: Path, log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """dbus-daemon, returned once it listens: it prints its address when it does, so this
    waits on that line (no polling for its socket)."""
    with log.open("ab") as err:
        process = subprocess.Popen(["dbus-daemon", "--nofork", "--print-address",
                                    "--config-file", str(config)], stdout=subprocess.PIPE,
                                   stderr=err, stdin=subprocess.DEVNULL, env=env,
                                   start_new_session=True)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], STARTUP_S)
    if not ready or not process.stdout.readline():
        kill(process)
        raise AssertionError(f"dbus-daemon did not start within {STARTUP_S:.0f} s: "
                             f"{log.read_text(errors='replace')[-500:]}")
    return process


def wait_for_rauc(bus_address: str, rauc: subprocess.Popen[bytes], log: Path) -> str:
    """Until `rauc service` owns its name on the bus and answers; its unique name. Waits on
    the bus daemon's NameOwnerChanged signal (nothing slept blindly), gives up at once if
    RAUC exits (with its log), and after STARTUP_S."""
    rule = MatchRule(type="signal", sender="org.freedesktop.DBus",
                     interface="org.freedesktop.DBus", member="NameOwnerChanged",
                     path="/org/freedesktop/DBus")
    rule.add_arg_condition(0, INSTALLER.bus_name)
    deadline = time.monotonic() + STARTUP_S
    with open_dbus_connection(bus=bus_address) as bus:
        bus.send_and_get_reply(message_bus.AddMatch(rule), timeout=STARTUP_S)
        with bus.filter(rule) as owner_changes:
            owned = unwrap_msg(bus.send_and_get_reply(
                message_bus.NameHasOwner(INSTALLER.bus_name), timeout=STARTUP_S))[0]
            while not owned:
                if rauc.poll() is not None:
                    raise AssertionError(f"rauc service exited ({rauc.returncode}): "
                                         f"{log.read_text(errors='replace')[-800:]}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"rauc service not on the bus within {STARTUP_S:.0f} "
                                         f"s: {log.read_text(errors='replace')[-800:]}")
                with contextlib.suppress(TimeoutError):  # wakes to look at the process
                    owned = bool(bus.recv_until_filtered(owner_changes, timeout=0.5).body[2])
    client = RaucClient(bus_address)
    try:
        client.properties()  # owning its name, it also answers (its objects are exported)
        return client.owner()
    finally:
        client.close()


# -- a simulated board -------------------------------------------------------------------------


@dataclass(frozen=True)
class Lan:
    """The agent LAN of one test: UDP on loopback, a port of its own, a fresh key."""

    port: int
    key_file: Path

    def wire_section(self) -> str:
        return (f'[wire]\ntransport = "udp"\nudp_port = {self.port}\n'
                f'key_file = "{self.key_file}"\nmax_age_s = 2.0\n')


class SimBoard:
    def __init__(self, root: Path, name: str, keys: Keys, lan: Lan, *,
                 health_deadline_s: float = 8.0, healthy_for_s: float = 1.0,
                 agent_settings: Mapping[str, float] | None = None) -> None:
        self.root = root
        self.name = name
        self.compatible = f"foosball-sim-{name}"
        self.keys = keys
        self.lan = lan
        self.agent = BOARD_AGENT[name]
        self.health_deadline_s = health_deadline_s
        self.healthy_for_s = healthy_for_s
        self.agent_settings = dict(agent_settings or {})  # more keys of [update_agent]
        self.env: dict[str, str] = {}  # of the processes of the current boot
        root.mkdir(parents=True, exist_ok=True)
        for sub in ("data/rauc", "data/ota", "etc", "mnt", "log", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.bus_path = root / "system_bus"
        self.bus_address = f"unix:path={self.bus_path}"
        self.uboot_env = root / "uboot.env"
        self.reboot_request = root / "reboot-requested"
        self.slot_files = {boot: root / f"slot-{boot.lower()}.img" for boot in SLOT_NAMES}
        self.booted = ""
        self.boots: list[str] = []  # every slot booted, in order
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._write_configs()

    # -- the board's files ---------------------------------------------------------------
    def _write_configs(self) -> None:
        (self.root / "bus.conf").write_text(f"""<!DOCTYPE busconfig PUBLIC
 "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>{self.bus_address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
""")
        slots = "".join(f"[slot.{SLOT_NAMES[b]}]\ndevice={f}\ntype=raw\nbootname={b}\n\n"
                        for b, f in self.slot_files.items())
        (self.root / "system.conf").write_text(
            f"[system]\ncompatible={self.compatible}\nbootloader=custom\n"
            f"mountprefix={self.root / 'mnt'}\ndata-directory={self.root / 'data/rauc'}\n\n"
            f"[keyring]\npath={self.keys.ca_cert}\ncheck-purpose=codesign\n\n"
            f"[handlers]\nbootloader-custom-backend={UBOOT_BACKEND}\n\n{slots}")

    def board_toml(self, agents_start: bool) -> str:
        # An image whose agents do not start: its board.toml has a key the agent refuses.
        broken = "" if agents_start else "not_a_key_of_this_release = 1\n"
        panel = 'port = 0\ntoken_file = ""\n' if self.agent == "supervisory_panel" else ""
        return (self.lan.wire_section()
                + "[safety]\nheartbeat_period_s = 0.05\nstartup_grace_s = 60.0\n"
                  "[safety.deadlines]\n\n"
                + f"[{self.agent}]\n{panel}{broken}\n"
                + f'[update_agent]\nboard = "{self.name}"\nwatch = ["{self.agent}"]\n'
                  f"health_deadline_s = {self.health_deadline_s}\n"
                  f"healthy_for_s = {self.healthy_for_s}\nstatus_period_s = 0.5\n"
                  f"reboot_delay_s = 0.2\n"
                  f'state_dir = "{self.root / "data/ota"}"\n'
                  f'reboot_command = ["touch", "{self.reboot_request}"]\n'
                  f'version_file = "{self.root / "etc/os-release"}"\n'
                  f'dbus_address = "{self.bus_address}"\n'
                + "".join(f"{key} = {value}\n" for key, value in self.agent_settings.items()))

    def flash(self, version: str = "1.0") -> None:
        """A fresh SD card: the same image in both slots, A first."""
        image = image_bytes(version)
        for path in self.slot_files.values():
            path.write_bytes(image)
        self.uboot_env.write_text("BOOT_ORDER=A B\nBOOT_A_LEFT=3\nBOOT_B_LEFT=3\n")

    def uboot(self) -> dict[str, str]:
        """The simulated U-Boot environment."""
        return read_env(self.uboot_env)

    def bootloader_writes(self) -> list[str]:
        path = self.uboot_env.with_suffix(".writes")
        return path.read_text().splitlines() if path.exists() else []

    def slot_header(self, bootname: str) -> dict[str, object]:
        with self.slot_files[bootname].open("rb") as f:
            return dict(json.loads(f.readline()))

    # -- power ---------------------------------------------------------------------------
    def power_on(self, *, agents: bool = True) -> str:
        """Boot: U-Boot's choice, then the bus, RAUC and (unless `agents` is False, a board
        that hangs before userspace is up) the agents. The slot booted."""
        self.reboot_request.unlink(missing_ok=True)
        self.booted = choose_boot_slot(self.uboot_env)
        self.boots.append(self.booted)
        header = self.slot_header(self.booted)
        if not header["boots"]:
            return self.booted  # hangs before userspace: only a watchdog reset helps
        (self.root / "etc/os-release").write_text(f'VERSION_ID="{header["version"]}"\n')
        board_toml = self.root / "etc/board.toml"
        board_toml.write_text(self.board_toml(bool(header["agents_start"])))
        self.env = env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus_address,
                              FOOSBALL_UBOOT_ENV=str(self.uboot_env),
                              FOOSBALL_BOOTED=self.booted, TMPDIR=str(self.root / "tmp"))
        log = self.root / "log"
        self.bus_path.unlink(missing_ok=True)
        self.processes["dbus"] = start_bus(self.root / "bus.conf", log / "dbus.log", env)
        self.start_rauc()
        if agents:
            foosball = [sys.executable, "-m", "foosball.cli", "agent", "run"]
            for agent in (self.agent, "update_agent"):
                self.processes[agent] = start([*foosball, agent, "--config", board_toml],
                                              log / f"{agent}.log", env)
        return self.booted

    def start_rauc(self) -> str:
        """`rauc service` for the booted slot, as systemd starts it; its unique bus name."""
        log = self.root / "log" / "rauc.log"
        self.processes["rauc"] = start(["rauc", "--conf", self.root / "system.conf",
                                        f"--override-boot-slot={self.booted}", "service"],
                                       log, self.env)
        return wait_for_rauc(self.bus_address, self.processes["rauc"], log)

    def restart_rauc(self) -> str:
        """RAUC killed (SIGKILL, as a crash or the OOM killer) and started again, the rest
        of the board running on; the new RAUC's unique bus name."""
        kill(self.processes.pop("rauc"))
        self.unmount_bundles()
        return self.start_rauc()

    def unmount_bundles(self) -> None:
        # A RAUC killed mid-install leaves its bundle mounted; a power cut would not.
        prefix = f"{self.root / 'mnt'}/"
        with open("/proc/mounts") as mounts:
            points = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
        for point in reversed(points):
            subprocess.run(["umount", "-l", point], check=False)

    def power_off(self) -> None:
        for name in reversed(list(self.processes)):
            kill(self.processes.pop(name))
        self.unmount_bundles()

    def stop_agent(self, name: str) -> int:
        """SIGTERM, as systemd stops a unit; the agent's exit code."""
        process = self.processes.pop(name)
        process.send_signal(signal.SIGTERM)
        return process.wait(timeout=20)

    def reboot(self, *, agents: bool = True) -> str:
        self.power_off()
        return self.power_on(agents=agents)

    def reboot_requested(self) -> bool:
        return self.reboot_request.exists()

    def rauc(self) -> RaucClient:
        return RaucClient(self.bus_address)

    def log(self, name: str) -> str:
        path = self.root / "log" / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


class RebootWatcher:
    """Carries out the simulated boards' reboot requests (their `reboot_command`), as
    systemd would, until stopped."""

    def __init__(self, boards: list[SimBoard]) -> None:
        self.boards = boards
        self._stop = threading.Event()
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            for board in self.boards:
                if board.reboot_requested():
                    try:
                        board.reboot()
                    except Exception as exc:  # reported by the test, not lost in a thread
                        self.errors.append(f"{board.name}: {exc}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


class StallingSlot:
    """A slot device that takes `after` bytes and then no more, as a card that hangs: the
    file becomes a pipe whose reader stops, so RAUC blocks in its write mid-image, at a
    moment the test knows, until the power is cut. `settle()` then leaves on the "card"
    what had been written over the old contents."""

    def __init__(self, path: Path, after: int) -> None:
        self.path = path
        self.old = path.read_bytes()
        self.after = after
        self.written = bytearray()
        self.stalled = threading.Event()
        self._released = threading.Event()
        path.unlink()
        os.mkfifo(path)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with self.path.open("rb") as pipe:
            while len(self.written) < self.after:
                chunk = pipe.read(min(65536, self.after - len(self.written)))
                if not chunk:
                    return
                self.written.extend(chunk)
            self.stalled.set()
            self._released.wait()  # nothing more is taken (the writer blocks) until settle()

    def settle(self) -> None:
        self._released.set()
        self._thread.join(timeout=10)
        self.path.unlink()
        self.path.write_bytes(bytes(self.written) + self.old[len(self.written):])
