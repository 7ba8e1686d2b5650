"""The one board configuration loader, through `foosball agent check` and `agent run`: every
bad board.toml is one line naming the file, the section and the key (never a traceback),
and check refuses exactly what run refuses."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from foosball.agent_registry import AGENTS
from foosball.cli import main
from foosball.config import load_board_config
from foosball.ethercat import layout as L
from foosball.geometry import default_table_path
from foosball.sim.vision_source import sim_calibration
from foosball.vision.calibration import write_calibration
from foosball.wire.codec import new_key

GOOD = """\
[wire]
transport = "udp"
key_file = "{key}"
max_age_s = 0.05

[table]
geometry = "{table}"

[safety]
startup_grace_s = 30.0
[safety.deadlines]
motor_driver = 0.025

[motor_driver]
backend = "fake"
drives = 8
cycle_s = 0.005

[pole_driver]
limit_policy = "clamp"

[supervisory_panel]
port = 8081

[strategy]
strategy = "improved"

[game_panel]
port = 8080

[match_recorder]
max_file_bytes = 1048576
max_total_bytes = 4194304

[ball_tracker]
calibration = "{calibration}"

[ball_tracker.source]
kind = "sim"

[update_agent]
board = "pole"
"""


@dataclass
class Board:
    dir: Path
    path: Path
    key: Path
    calibration: Path

    def replace(self, old: str, new: str) -> None:
        text = self.path.read_text()
        assert old in text, old
        self.path.write_text(text.replace(old, new, 1))

    def append(self, text: str) -> None:
        self.path.write_text(self.path.read_text() + text)


def make_board(tmp_path: Path) -> Board:
    key = tmp_path / "wire.key"
    key.write_text(new_key() + "\n")
    key.chmod(0o600)
    calibration = tmp_path / "camera.json"
    write_calibration(sim_calibration(), calibration)
    path = tmp_path / "board.toml"
    path.write_text(GOOD.format(key=key, table=default_table_path(), calibration=calibration))
    return Board(tmp_path, path, key, calibration)


def _file(name: str, text: str) -> Callable[[Board], None]:
    """Point a key at a file of the test's own with this text."""
    def change(board: Board) -> None:
        (board.dir / name).write_text(text)
    return change


def _after(anchor: str, line: str) -> Callable[[Board], None]:
    """Add `line` after the line `anchor` of the good board."""
    return lambda board: board.replace(anchor, f"{anchor}\n{line}")


UDP = 'transport = "udp"'
TABLE = str(default_table_path())

# A [safety.watches] table after the deadlines, holding one line.
WATCHES = "motor_driver = 0.025\n[safety.watches]\n{}"

# (what is wrong, how the good board is spoiled, what the message must say besides the file)
CASES: list[tuple[str, Callable[[Board], None], str]] = [
    ("recordings bound below two files",
     lambda b: b.replace("max_file_bytes = 1048576", "max_file_bytes = 4194304"),
     "[match_recorder] max_total_bytes: at least twice max_file_bytes (8388608), not "
     "4194304"),
    ("max_age_s a word", lambda b: b.replace("max_age_s = 0.05", 'max_age_s = "fast"'),
     "[wire] max_age_s: a number (s), not 'fast'"),
    ("udp_port a word", _after(UDP, 'udp_port = "x"'),
     "[wire] udp_port: an integer, not 'x'"),
    ("udp_port out of range", _after(UDP, "udp_port = 0"),
     "[wire] udp_port: 0 is out of range"),
    ("unknown transport", lambda b: b.replace('transport = "udp"', 'transport = "tcp"'),
     "[wire] transport: one of 'raw', 'udp', not 'tcp'"),
    ("ethertype too small", _after(UDP, "ethertype = 0x10"),
     "[wire] ethertype: 16 is out of range"),
    ("udp destination not an address",
     _after(UDP, 'udp_destination = "nowhere"'),
     "[wire] udp_destination: an IPv4 address, not 'nowhere'"),
    ("misspelt wire key", lambda b: b.replace("transport =", "transprot ="),
     "[wire]: unknown key transprot"),
    ("drives a word", lambda b: b.replace("drives = 8", 'drives = "eight"'),
     "[motor_driver] drives: an integer, not 'eight'"),
    ("negative cycle", lambda b: b.replace("cycle_s = 0.005", "cycle_s = -1"),
     "[motor_driver] cycle_s: -1 is out of range (>= 0.0005 and <= 0.1 s)"),
    ("cycle with a unit", lambda b: b.replace("cycle_s = 0.005", 'cycle_s = "5 ms"'),
     "[motor_driver] cycle_s: a number (s), not '5 ms'"),
    ("unknown EtherCAT backend", lambda b: b.replace('backend = "fake"', 'backend = "soem"'),
     "[motor_driver] backend: one of 'pysoem', 'fake', not 'soem'"),
    ("unknown alignment option", _after("drives = 8", 'alignment = "bits"'),
     "[motor_driver] alignment: one of 'manufacturer_bits', 'sdo', 'none', not 'bits'"),
    ("watchdog beyond the ESC's range",
     lambda b: b.replace("drives = 8", "drives = 8\nwatchdog_ms = 10000"),
     "[motor_driver] watchdog_ms: 10000 is out of range (>= 1 and <= 6000 ms)"),
    ("watchdog shorter than two cycles",
     lambda b: b.replace("drives = 8", "drives = 8\nwatchdog_ms = 2"),
     "[motor_driver] watchdog_ms: 2 ms is shorter than two cycles (2 x cycle_s 0.005 s = "
     "10 ms)"),
    ("frame wait longer than the cycle",
     lambda b: b.replace("drives = 8", "drives = 8\nreceive_timeout_us = 100000"),
     "[motor_driver] receive_timeout_us: 100000 us is not within a cycle (cycle_s 0.005 s = "
     "5000 us); 1500 us suits it"),
    ("no EtherCAT interface",
     lambda b: b.replace('backend = "fake"', 'backend = "pysoem"\niface = ""'),
     "[motor_driver] iface: empty; the pysoem backend needs the EtherCAT interface"),
    ("no LAN interface", lambda b: b.replace('transport = "udp"', 'transport = "raw"\niface = ""'),
     "[wire] iface: empty; the raw transport needs the LAN interface"),
    ("deadline shorter than two heartbeat periods",
     lambda b: b.replace("motor_driver = 0.025", "motor_driver = 0.005"),
     "[safety.deadlines] motor_driver: 0.005 s is shorter than two heartbeat periods "
     "(2 x heartbeat_period_s 0.01 s = 0.02 s)"),
    ("heartbeat period beyond the deadlines",
     lambda b: b.replace("startup_grace_s = 30.0", "startup_grace_s = 30.0\n"
                                                   "heartbeat_period_s = 0.05"),
     "[safety.deadlines] motor_driver: 0.025 s is shorter than two heartbeat periods "
     "(2 x heartbeat_period_s 0.05 s = 0.1 s)"),
    ("unknown motor driver key", lambda b: b.replace("drives = 8", "drives = 8\ncycle = 0.005"),
     "[motor_driver]: unknown key cycle"),
    ("axes are the geometry's", lambda b: b.replace("drives = 8", "drives = 8\naxes = []"),
     "[motor_driver]: unknown key axes"),
    ("typo in a section name", lambda b: b.replace("[table]", "[tabel]"),
     "unknown section [tabel]"),
    ("geometry a number", lambda b: b.replace(f'geometry = "{default_table_path()}"',
                                              "geometry = 5"),
     "[table] geometry: a string, not 5"),
    ("geometry file missing", lambda b: b.replace(TABLE, "/nonexistent/table.json"),
     "[table] geometry: /nonexistent/table.json: cannot read: No such file or directory"),
    ("geometry file not JSON", lambda b: (_file("table.json", "{")(b), b.replace(
        str(default_table_path()), str(b.dir / "table.json"))),
     "[table] geometry: "),
    ("key file missing", lambda b: b.key.unlink(),
     "[wire] key_file: {key}: cannot read: No such file or directory"),
    ("key file readable by everyone", lambda b: b.key.chmod(0o644),
     "[wire] key_file: {key}: readable by others (mode 0644); `chmod 600 {key}`"),
    ("key file readable by the group", lambda b: b.key.chmod(0o640),
     "[wire] key_file: {key}: readable by others (mode 0640)"),
    ("key file not a key", lambda b: b.key.write_text("not hex\n"),
     "[wire] key_file: {key}: the key must be 64 hex characters"),
    ("calibration missing", lambda b: b.calibration.unlink(),
     "[ball_tracker] calibration: {calibration}: cannot read: No such file or directory"),
    ("calibration not JSON", lambda b: b.calibration.write_text("]"),
     "[ball_tracker] calibration: {calibration}: not JSON"),
    ("saved thresholds broken", lambda b: (_file("thresholds.json", "{}")(b), b.replace(
        f'calibration = "{b.calibration}"',
        f'calibration = "{b.calibration}"\nthresholds_file = "{b.dir / "thresholds.json"}"')),
     "[ball_tracker] thresholds_file: "),
    ("tracker without a camera", lambda b: b.replace('[ball_tracker.source]\nkind = "sim"\n', ""),
     "[ball_tracker] source.kind: missing"),
    ("tracker threshold out of range",
     lambda b: b.append("[ball_tracker.detector]\nhue_low = 300\n"),
     "[ball_tracker.detector] hue_low: 300 is out of range (>= 0 and <= 179)"),
    ("unknown strategy key", lambda b: b.replace('strategy = "improved"',
                                                 'strategy = "improved"\ncolour = "red"'),
     "[strategy]: unknown key colour"),
    ("unknown strategy", lambda b: b.replace('strategy = "improved"', 'strategy = "best"'),
     "[strategy] strategy: no strategy 'best'"),
    ("bad limit policy", lambda b: b.replace('limit_policy = "clamp"', 'limit_policy = "ignore"'),
     "[pole_driver] limit_policy: one of 'clamp', 'reject', not 'ignore'"),
    ("panel port out of range", lambda b: b.replace("port = 8080", "port = 70000"),
     "[game_panel] port: 70000 is out of range"),
    ("panel timing zero", lambda b: b.replace("port = 8081", "port = 8081\nstale_after_s = 0"),
     "[supervisory_panel] stale_after_s: 0 is out of range (> 0"),
    ("unknown safety key", lambda b: b.replace("startup_grace_s = 30.0", "startup_grace = 30.0"),
     "[safety]: unknown key startup_grace"),
    ("a bool for seconds", lambda b: b.replace("startup_grace_s = 30.0", "startup_grace_s = true"),
     "[safety] startup_grace_s: a number (s), not True"),
    ("deadline of an unknown agent", lambda b: b.replace("motor_driver = 0.025",
                                                                          "strategie = 0.03"),
     "[safety.deadlines] strategie: no agent 'strategie'"),
    ("deadline zero", lambda b: b.replace("motor_driver = 0.025", "motor_driver = 0"),
     "[safety.deadlines] motor_driver: seconds in (0, 10], not 0"),
    ("watches an agent with no deadline", lambda b: b.replace(
        "motor_driver = 0.025", WATCHES.format('pole_driver = ["strategy"]')),
     "[safety.watches] pole_driver: strategy not under [safety.deadlines]"),
    ("watches itself", lambda b: b.replace(
        "motor_driver = 0.025", WATCHES.format('motor_driver = ["motor_driver"]')),
     "[safety.watches] motor_driver: an agent does not watch itself"),
    ("watches not a list", lambda b: b.replace(
        "motor_driver = 0.025", WATCHES.format('pole_driver = "motor_driver"')),
     "[safety.watches] pole_driver: a list of agent names, not 'motor_driver'"),
    ("agent section not a table", lambda b: b.path.write_text(
        'pole_driver = 3\n' + b.path.read_text().replace('[pole_driver]\nlimit_policy = "clamp"\n',
                                                          "")),
     "[pole_driver]: a table of settings, not 3"),
    ("not TOML", lambda b: b.path.write_text("[wire\n"), "not TOML"),
]


@pytest.mark.parametrize(("spoil", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_agent_check_names_the_file_section_and_key_of_every_bad_board(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        spoil: Callable[[Board], None], message: str) -> None:
    board = make_board(tmp_path)
    assert main(["agent", "check", "--config", str(board.path)]) == 0
    capsys.readouterr()
    spoil(board)
    assert main(["agent", "check", "--config", str(board.path)]) == 1
    out, err = capsys.readouterr()
    expected = message.format(key=board.key, calibration=board.calibration)
    assert err.startswith(f"error: {board.path}: ") and expected in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and not out


@pytest.mark.parametrize("case", ["max_age_s a word", "udp_port a word", "drives a word",
                                  "key file readable by everyone", "typo in a section name"])
def test_agent_run_refuses_exactly_what_check_refuses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    """`agent run` used to crash on what `agent check` passed (a TypeError traceback)."""
    board = make_board(tmp_path)
    dict((c[0], c[1]) for c in CASES)[case](board)
    assert main(["agent", "check", "--config", str(board.path)]) == 1
    check = capsys.readouterr().err
    assert main(["agent", "run", "pole_driver", "--config", str(board.path)]) == 1
    assert capsys.readouterr().err == check


def test_the_good_board_gives_every_agent_its_typed_settings(tmp_path: Path) -> None:
    board = load_board_config(make_board(tmp_path).path)
    motor = board.settings("motor_driver")
    assert (motor.bus.backend, motor.bus.drives, motor.agent.cycle_s) == ("fake", 8, 0.005)
    assert motor.agent.alignment is L.Alignment.MANUFACTURER_BITS
    assert len(motor.agent.axes) == 8  # from the geometry
    assert board.settings("strategy").strategy == "improved"
    assert len(board.wire_key) == 32
    assert set(board.agents) == set(AGENTS)  # every agent a section
    # the update agent judges the boot by every other agent of the board unless told
    assert set(board.settings("update_agent").watch) == set(AGENTS) - {"update_agent"}


def test_an_enum_option_is_taken_by_its_value(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    board.replace("drives = 8", 'drives = 8\nalignment = "none"')
    motor = load_board_config(board.path).settings("motor_driver")
    assert motor.agent.alignment is L.Alignment.NONE


def test_the_shipped_board_names_itself_and_the_key_of_a_missing_file(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "/etc/foosball/table.json: cannot read", without the board.toml."""
    shipped = Path(__file__).resolve().parents[2] / "image-config" / "pole" / "board.toml"
    if os.path.exists("/etc/foosball/table.json"):
        pytest.skip("this machine has a table geometry installed")
    assert main(["agent", "check", "--config", str(shipped)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {shipped}: [table] geometry: /etc/foosball/table.json: cannot read: "
        "No such file or directory")


def test_the_tracker_gives_the_camera_s_first_frame_the_board_s_startup_grace(
        tmp_path: Path) -> None:
    """Issue 29: a fixed 2 s, missed under load: the rig often started in FAULT."""
    from foosball.agent_registry import build_ball_tracker

    board = make_board(tmp_path)
    board.replace("startup_grace_s = 30.0", "startup_grace_s = 45.0")
    config = load_board_config(board.path)
    runtime = build_ball_tracker(config, config.settings("ball_tracker"))
    try:
        assert runtime.core.startup_grace_s == 45.0 == config.safety.startup_grace_s
    finally:
        runtime.endpoint.close()
        if runtime.hardware is not None:
            runtime.hardware.close()
