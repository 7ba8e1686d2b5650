"""The simulated rig: the product's agents on three "boards", in one of three modes:

- booted boards (root, systemd-nspawn): each board a container booted from a Debian root
  with only that board's files as the recipes install them; systemd starts the agents from
  their units, restarts one that dies and kills a hung one (foosball.rig.booted);
- namespaced processes (root): each agent a process in its board's network namespace;
- single host (no root): each agent a process on the host, UDP multicast on loopback.

Either way each agent runs as its board's systemd unit runs it (`foosball agent run NAME
--config board.toml`), from a board.toml the rig writes for each board; the EtherCAT drives
are the drive emulator answering the real pysoem master over a veth (root) or the fake bus
(no root); the camera is the simulator's renderer serving frames on a UNIX socket to the
tracker's `socket` frame source. Every process's output goes to `<run_dir>/logs/<name>.log`.

Faults a test (or a person) can inject: signals to any process, a board's LAN cable cut,
the EtherCAT cable cut, drive faults and deaf slaves through the emulator's control
socket, the camera stopped, and a board's wall clock stepped (libfaketime on that board's
processes: the monotonic clock is left alone, as PTP leaves it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from foosball.agent_registry import AGENTS, EVERY_BOARD
from foosball.geometry import default_table_path
from foosball.processes import die_with_parent
from foosball.rig import MODES
from foosball.rig.booted import CAMERA_DIR, DATA, BootedBoards, booted_unavailable
from foosball.rig.network import LoopbackLan, NamespaceLan, netns_unavailable
from foosball.rig.rootfs import mounts_under
from foosball.wire.codec import new_key

# The agents the rig runs (every board's, not the update agent) -> their board's namespace.
AGENT_BOARD = {name: spec.board for name, spec in AGENTS.items() if spec.board != EVERY_BOARD}
# Agents nobody holds to a deadline: the match recorder's loss loses a recording, not the
# game (its peers do not watch its heartbeat; see agents/match_recorder/core.py).
UNWATCHED = ("match_recorder",)
CORE_AGENTS = ("motor_driver", "pole_driver", "ball_tracker", "strategy")
PANEL_PORTS = {"game_panel": 8080, "supervisory_panel": 8081}
PLAYER_PORT = 8090  # `--opponent browser`: the page a person plays the human's rods on
ROD_POSE_PORT = 47800  # the emulator's rod poses to the live table (pole namespace loopback)
FAKETIME_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                      "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1")


def faketime_library() -> str | None:
    return next((p for p in FAKETIME_LIBRARIES if os.path.exists(p)), None)


def choose_mode(requested: str | None, use_namespaces: bool | None = None) -> str:
    """The mode asked for (an error saying why when this host cannot run it). "auto": the
    first of booted boards, namespaced processes, single host this host can run (as
    `foosball rig up`); None: namespaced processes where it can, else (or with
    `use_namespaces=False`) the single host, as the rig's library callers always had it."""
    why_not = {"booted": booted_unavailable, "processes": netns_unavailable,
               "single-host": lambda: None}
    if requested == "auto":
        return next(mode for mode in MODES if why_not[mode]() is None)
    if requested is None:
        if use_namespaces is False or (use_namespaces is None and netns_unavailable()):
            return "single-host"
        requested = "processes"
    if requested not in MODES:
        raise ValueError(f"no rig mode {requested!r}: auto, {', '.join(MODES)}")
    reason = why_not[requested]()
    if reason is not None:
        raise RuntimeError(f"the rig cannot run {MODES[requested]} here: {reason}")
    return requested


@dataclass
class RigOptions:
    run_dir: Path
    agents: tuple[str, ...] = CORE_AGENTS
    fps: float = 50.0
    opponent: str = "club"  # who plays the human's rods: rookie | club | pro | hold | browser
    player_port: int = PLAYER_PORT  # opponent "browser": the person's page (camera's namespace)
    strategy: str = "improved"
    deadline_s: float = 0.025  # as the images ship it: a lost agent caught within 3 periods
    bus_error_tolerance_s: float = 0.015  # as the images ship it (MotorDriverConfig)
    startup_grace_s: float = 30.0
    camera_timeout_s: float = 0.2
    steppable_clocks: tuple[str, ...] = ()  # boards whose wall clock the rig may step
    panel_ports: dict[str, int] = field(default_factory=lambda: dict(PANEL_PORTS))
    use_namespaces: bool | None = None  # False: single host (kept for callers of old)
    mode: str | None = None  # a key of MODES or "auto" (choose_mode)
    truth: str | None = None  # HOST:PORT (camera's namespace) for the live table's ball truth


class Rig:
    def __init__(self, options: RigOptions) -> None:
        self.options = options
        self.run_dir = options.run_dir
        self.logs = self.run_dir / "logs"
        self.mode = choose_mode(options.mode, options.use_namespaces)
        self.lan: NamespaceLan | LoopbackLan = (LoopbackLan() if self.mode == "single-host"
                                                else NamespaceLan())
        self.boards: BootedBoards | None = None
        if self.mode == "booted":
            assert isinstance(self.lan, NamespaceLan)
            self.boards = BootedBoards(self.run_dir, self.lan.ns, self.logs)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._log_files: dict[str, IO[bytes]] = {}
        self.key_file = self.run_dir / "wire.key"
        self.emulator_socket = self.run_dir / "emulator.sock"
        if self.boards is not None:
            self.camera_socket = self.boards.camera_dir / "camera.sock"
            self.calibration = self.boards.host_path("vision", self.paths.calibration)
            self.markers = self.boards.host_path("vision", self.paths.markers)
        else:
            self.camera_socket = self.run_dir / "camera.sock"
            self.calibration = self.run_dir / "calibration.json"
            self.markers = self.run_dir / "markers.json"

    @property
    def namespaced(self) -> bool:
        return isinstance(self.lan, NamespaceLan)

    @property
    def paths(self) -> BoardPaths:
        """The paths board.toml names, as the agents see them."""
        if self.boards is not None:
            return BoardPaths(key_file=f"{DATA}/wire.key", geometry="/etc/foosball/table.json",
                              calibration=f"{DATA}/calibration/camera.json",
                              markers=f"{DATA}/calibration/markers.json",
                              camera_socket=f"{CAMERA_DIR}/camera.sock",
                              matches=f"{DATA}/matches",
                              panel_token=None)  # the board's own /data/foosball
        # The panel token in the run dir: the game panel's default is the board's
        # /data/foosball/panel.token, which on this host is nobody's.
        return BoardPaths(key_file=str(self.key_file), geometry=str(default_table_path()),
                          calibration=str(self.calibration), markers=str(self.markers),
                          camera_socket=str(self.camera_socket),
                          matches=str(self.run_dir / "matches"),
                          panel_token=str(self.run_dir / "panel.token"))

    # -- configuration -------------------------------------------------------------------
    def board_file(self, board: str) -> Path:
        return self.run_dir / f"{board}.toml"

    def write_board_files(self) -> None:
        o = self.options
        deadlines = "\n".join(f"{agent} = {o.deadline_s}" for agent in o.agents
                              if agent not in UNWATCHED)
        # As the pole board ships (image-config/pole/board.toml): the motor driver watches
        # its board mates, which watch the rest.
        mates = [f'"{a}"' for a in o.agents if AGENT_BOARD[a] == "pole" and a != "motor_driver"]
        watches = ["[safety.watches]", f"motor_driver = [{', '.join(mates)}]"] \
            if "motor_driver" in o.agents and mates else []
        for board in ("pole", "vision", "strategy"):
            agents = [a for a in o.agents if AGENT_BOARD[a] == board]
            if not agents:
                continue
            lines = [
                f"# The rig's {board} board (written by foosball.rig)",
                "[wire]",
                f'transport = "{self.lan.transport}"',
                *([f'iface = "{self.lan.iface}"'] if self.lan.transport == "raw" else []),
                f'key_file = "{self.paths.key_file}"',
                "max_age_s = 0.05",
                "[table]",
                f'geometry = "{self.paths.geometry}"',
                "[safety]",
                f"startup_grace_s = {o.startup_grace_s}",
                "[safety.deadlines]",
                deadlines,
                *watches,
            ]
            for agent in agents:
                lines += self._agent_section(agent)
            self.board_file(board).write_text("\n".join(lines) + "\n")

    def _agent_section(self, agent: str) -> list[str]:
        o = self.options
        if agent == "motor_driver":
            backend = ('backend = "pysoem"\niface = "ecat0"' if self.namespaced
                       else 'backend = "fake"')
            return ["[motor_driver]", backend, "drives = 8", "cycle_s = 0.005",
                    f"bus_error_tolerance_s = {o.bus_error_tolerance_s}"]
        if agent == "ball_tracker":
            from foosball.sim.render import CameraConfig

            # the simulated camera's marker layout and focal length: the game panel's
            # Camera tab calibrates with them (its camera looks straight down)
            return ["[ball_tracker]", f'calibration = "{self.paths.calibration}"',
                    f'markers_file = "{self.paths.markers}"', f"focal_px = {CameraConfig().fx}",
                    f"camera_timeout_s = {o.camera_timeout_s}",
                    "[ball_tracker.source]", 'kind = "socket"',
                    f'options = {{ path = "{self.paths.camera_socket}" }}']
        if agent == "strategy":
            return ["[strategy]", f'strategy = "{o.strategy}"']
        if agent == "game_panel" and self.paths.panel_token is not None:
            return [f"[{agent}]", f"port = {o.panel_ports[agent]}",
                    f'token_file = "{self.paths.panel_token}"']
        if agent in o.panel_ports:
            return [f"[{agent}]", f"port = {o.panel_ports[agent]}"]
        if agent == "match_recorder":
            return [f"[{agent}]", f'directory = "{self.paths.matches}"']
        return [f"[{agent}]"]

    # -- processes -----------------------------------------------------------------------
    def _env(self, board: str) -> dict[str, str]:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if board in self.options.steppable_clocks:
            library = faketime_library()
            if library is None:
                raise RuntimeError("stepping a board's clock needs libfaketime (apt faketime)")
            clock_file = self.clock_file(board)
            if not clock_file.exists():
                clock_file.write_text("+0\n")
            env.update(LD_PRELOAD=library, FAKETIME_TIMESTAMP_FILE=str(clock_file),
                       FAKETIME_CACHE_DURATION="1", DONT_FAKE_MONOTONIC="1")
        return env

    def clock_file(self, board: str) -> Path:
        return self.run_dir / f"clock-{board}"

    def spawn(self, name: str, board: str, args: list[str], clock_of: str | None = None,
              umask: int = -1) -> subprocess.Popen[bytes]:
        """`board`: the namespace it runs in; `clock_of`: whose wall clock it keeps."""
        if name in self.processes and self.processes[name].poll() is None:
            raise RuntimeError(f"{name} is already running")
        log = self._log_files.get(name)
        if log is None:
            log = self._log_files[name] = (self.logs / f"{name}.log").open("ab")
        command = [*self.lan.prefix_command(board), sys.executable, "-m", "foosball.cli", *args]
        log.write(f"--- {time.time():.6f} start: {' '.join(command)}\n".encode())
        log.flush()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL,
                                   env=self._env(clock_of or board), umask=umask,
                                   start_new_session=True, preexec_fn=die_with_parent)
        self.processes[name] = process
        return process

    def start_agent(self, agent: str) -> subprocess.Popen[bytes] | None:
        """The agent's process (None on booted boards: its board's systemd starts it)."""
        if self.boards is not None:
            self.boards.start(agent)
            return None
        board = AGENT_BOARD[agent]
        return self.spawn(agent, board, ["agent", "run", agent, "--config",
                                         str(self.board_file(board))])

    def restart(self, name: str, timeout_s: float = 60.0) -> None:
        """A killed process back as its board brings it back: on booted boards systemd
        restarts an agent by itself (Restart=always), and this waits for that."""
        if self.boards is not None and name in self.boards.agents:
            boards = self.boards
            self._wait_for(lambda: boards.active(name) == "active"
                           and boards.main_pid(name) != 0, timeout_s,
                           f"{name} restarted by systemd")
            return
        self.stop(name)
        if name == "camera":
            self.start_camera()
        else:
            self.start_agent(name)

    def start_camera(self) -> subprocess.Popen[bytes]:
        """The live table and its camera. It runs beside the drive emulator (the rod poses
        come over UDP on that namespace's loopback) and keeps the vision board's clock, as
        the camera is the vision board's."""
        args = ["sim", "camera", "--socket", str(self.camera_socket), "--fps",
                str(self.options.fps), "--opponent", self.options.opponent]
        if "motor_driver" in self.options.agents and self.namespaced:
            args += ["--rod-poses", str(ROD_POSE_PORT)]
        if os.geteuid() == 0:
            # Root (namespaced or not: the agents are real-time either way): the simulated
            # world keeps real time, below every agent (at nice -10 instead, outside the
            # real-time budget, it starved whenever anything else ran: 211 of 600 frames in
            # 29 s; see docs/notes/issue-12.md).
            args += ["--rt-priority", "10"]
        if self.options.opponent == "browser":
            args += ["--player-port", str(self.options.player_port)]
        if self.options.truth:
            args += ["--truth", self.options.truth]
        # On booted boards the tracker (the foosball user) connects to the socket: it must
        # be writable by others, as a V4L2 device node is to the video group.
        return self.spawn("camera", self.camera_board, args, clock_of="vision",
                          umask=0o000 if self.boards is not None else -1)

    @property
    def camera_board(self) -> str:
        """The namespace the camera (the live table, the browser player's page) runs in."""
        return "pole" if self.namespaced else "vision"

    def up(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / RUN_DIR_MARK).write_text("a run dir of foosball.rig: `rig up` "
                                                 "deletes it at the next start\n")
        self.logs.mkdir(exist_ok=True)
        self.key_file.write_text(new_key() + "\n")
        self.key_file.chmod(0o600)
        self.write_board_files()
        agents = self.options.agents
        if self.boards is not None:
            for board in ("pole", "vision", "strategy"):
                if self.board_file(board).exists():
                    self.boards.prepare(board, self.board_file(board).read_text(),
                                        self.key_file)
        if "ball_tracker" in agents:
            from foosball.sim.vision_source import marker_layout, sim_calibration
            from foosball.vision.calibration import write_calibration

            write_calibration(sim_calibration(), self.calibration)
            self.markers.write_text(json.dumps(marker_layout().to_json(), indent=1) + "\n")
        if "motor_driver" in agents and self.namespaced:
            self.spawn("emulator", "pole", [
                "ethercat", "emulate", "--iface", "ecat1", "--drives", "8",
                "--start-fraction", "0.15", "--alignment-time", "0.1", "--rt-priority", "70",
                "--control-socket", str(self.emulator_socket),
                "--rod-poses", f"127.0.0.1:{ROD_POSE_PORT}"])
            self._wait_for(self.emulator_socket.exists, 20.0, "the drive emulator")
        if self.boards is not None:
            # The boards boot; their systemd starts the agents (foosball.target).
            for board, process in self.boards.boot(die_with_parent).items():
                self.processes[f"{board} board"] = process
        else:
            for agent in agents:
                self.start_agent(agent)
        if "ball_tracker" in agents:
            self.start_camera()

    def _wait_for(self, done: Any, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start; see {self.logs}")
            time.sleep(0.05)

    def signal(self, name: str, signum: int) -> float:
        """Signal an agent (or the camera, the emulator); returns when it was sent."""
        if self.boards is not None and name in self.boards.agents:
            return self.boards.signal(name, signum)
        process = self.processes[name]
        # ip netns exec execs the command, so the pid is the agent's own
        os.kill(process.pid, signum)
        return time.monotonic()

    def stop(self, name: str, timeout_s: float = 10.0) -> int | None:
        if self.boards is not None and name in self.boards.agents:
            self.boards.stop(name)
            return None
        process = self.processes.get(name)
        if process is None or process.poll() is not None:
            return process.returncode if process is not None else None
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGCONT)  # a stopped process cannot take SIGTERM
            process.terminate()
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            # Not stopped: its threads' stacks into its log first (faulthandler, foosball/
            # cli.py), so the log says where it hung, then killed.
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGUSR1)
            with contextlib.suppress(subprocess.TimeoutExpired):
                return process.wait(timeout=1.0)
            process.kill()
            return process.wait()

    def down(self) -> dict[str, int | None]:
        """Stop everything (agents first, the emulator last) and remove the namespaces."""
        codes: dict[str, int | None] = {}
        if self.boards is not None:
            codes.update(self.boards.halt())  # the agents stop as their boards halt
        order = [n for n in self.processes
                 if n not in ("emulator", "camera") and n not in codes]
        for name in [*order, "camera", "emulator"]:
            if name in self.processes:
                codes[name] = self.stop(name)
        for log in self._log_files.values():
            log.close()
        self._log_files.clear()
        self.lan.delete()
        return codes

    # -- faults ---------------------------------------------------------------------------
    def emulator(self, line: str) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5.0)
            sock.connect(str(self.emulator_socket))
            sock.sendall(line.encode() + b"\n")
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                reply += chunk
        answer: dict[str, Any] = json.loads(reply)
        if not answer.get("ok"):
            raise RuntimeError(f"emulator refused {line!r}: {answer}")
        return answer

    def step_clock(self, board: str, seconds: float) -> None:
        """Step the board's wall clock to `seconds` off true time (libfaketime re-reads the
        offset file within a second)."""
        if board not in self.options.steppable_clocks:
            raise RuntimeError(f"{board}'s clock was not started steppable")
        self.clock_file(board).write_text(f"{seconds:+g}\n")

    def log_text(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def describe(self) -> str:
        boards = f"{self.boards.describe()}; " if self.boards is not None else ""
        return (f"rig ({MODES[self.mode]}) in {self.run_dir}: {boards}{self.lan.describe()}; "
                f"agents {', '.join(self.options.agents)}; logs in {self.logs}")


@dataclass(frozen=True)
class BoardPaths:
    key_file: str
    geometry: str
    calibration: str
    markers: str  # the marker layout the tracker's guided calibration uses
    camera_socket: str
    matches: str
    panel_token: str | None  # None: the game panel's default (the board's /data)


RUN_DIR_MARK = ".foosball-rig"  # in every run dir the rig made: what clean_run_dir may delete


def clean_run_dir(path: Path) -> None:
    """Delete a run dir of an earlier rig (whatever it holds, a booted board's root still
    mounted included), so the next starts empty. A non-empty directory the rig did not make
    is refused: `--run-dir ~` must not delete a home."""
    if not path.exists():
        return
    if not path.is_dir():
        raise RuntimeError(f"{path} is not a directory")
    made_by_rig = (path / RUN_DIR_MARK).exists() or (  # or by a rig before the mark
        (path / "wire.key").exists() and (path / "logs").is_dir())
    if any(path.iterdir()) and not made_by_rig:
        raise RuntimeError(f"{path} is not empty and not a rig's run dir (no {RUN_DIR_MARK} "
                           "in it): not deleting it; name a new or empty directory")
    for mount_point in sorted(mounts_under(path), reverse=True):
        subprocess.run(["umount", "--lazy", mount_point], check=False)
    shutil.rmtree(path)
