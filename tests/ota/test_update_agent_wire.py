"""The update agent on the agent LAN: what it refuses, with the reason on the wire, and what
it never hears. A simulated pole board (rauc_env.py) with its real update agent process."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from foosball.ota.push import BundleServer
from foosball.wire.catalogue import (
    Agent,
    AxisStatus,
    DriveState,
    GameState,
    MotorStatus,
    OtaCommand,
    SafetyState,
)
from foosball.wire.codec import new_key
from foosball.wire.endpoint import Endpoint
from tests.ota.conftest import BOOT_S, StatusLog, booted_healthy, lan_endpoint
from tests.ota.rauc_env import Keys, Lan, SimBoard, make_bundle, needs_rauc, wait_for

pytestmark = needs_rauc()


def game(state: SafetyState) -> GameState:
    return GameState(state=state, score_robot=1, score_human=0, clock_s=12.0, alarm_text="")


def drives(state: DriveState) -> MotorStatus:
    return MotorStatus(axes=tuple(AxisStatus(axis=a, state=state, position=0.0, velocity=0.0,
                                             current=0.0, fault_code=0) for a in range(8)))


def refused_while(peer: Endpoint, message: object, tool: Endpoint, statuses: StatusLog,
                  url: str) -> str:
    """The refusal's text, for an install sent while `peer` keeps saying `message`."""
    for _ in range(3):  # the agent has heard it (it keeps a peer's word for 1 s)
        peer.send(message)
        time.sleep(0.05)
    since = statuses.mark()
    tool.send(OtaCommand(board="pole", action="install", url=url))
    peer.send(message)
    return statuses.wait("pole", lambda s: s.state == "refused", 10, since).text


def test_an_install_during_a_game_or_with_motors_enabled_is_refused_with_the_reason(
        make_board: Callable[..., SimBoard], dev_keys: Keys, lan: Lan, tool: Endpoint,
        statuses: StatusLog, tmp_path: Path) -> None:
    board = make_board("pole")
    server = BundleServer({"pole": make_bundle(tmp_path / "p.raucb", dev_keys,
                                               board.compatible, "2.0")}, "127.0.0.1")
    url = server.url("pole")
    game_panel = lan_endpoint(lan, Agent.GAME_PANEL)
    motor_driver = lan_endpoint(lan, Agent.MOTOR_DRIVER)
    try:
        booted_healthy(board, statuses)
        writes = board.bootloader_writes()

        assert refused_while(game_panel, game(SafetyState.PLAYING), tool, statuses, url) \
            == "a game is running (PLAYING)"
        assert refused_while(game_panel, game(SafetyState.PAUSED), tool, statuses, url) \
            == "a game is running (PAUSED)"
        game_panel.send(game(SafetyState.READY))
        assert refused_while(motor_driver, drives(DriveState.READY), tool, statuses, url) \
            == "motors enabled: 8 of 8 drives READY; halt them first"
        assert board.bootloader_writes() == writes  # nothing was installed
        assert board.rauc().properties()["Operation"] == "idle"

        # Drives halted from the supervisory panel, no game: the same command is taken.
        motor_driver.send(drives(DriveState.QUICK_STOP))
        tool.send(OtaCommand(board="pole", action="install", url=url))
        statuses.wait("pole", lambda s: s.state == "installed", BOOT_S)
    finally:
        game_panel.close()
        motor_driver.close()
        server.close()


def test_an_unauthenticated_ota_command_is_dropped(
        make_board: Callable[..., SimBoard], dev_keys: Keys, lan: Lan, tool: Endpoint,
        statuses: StatusLog, tmp_path: Path) -> None:
    board = make_board("pole")
    bundle = make_bundle(tmp_path / "p.raucb", dev_keys, board.compatible, "2.0")
    wrong_key = tmp_path / "other.key"
    wrong_key.write_text(new_key())
    outsider = lan_endpoint(lan, Agent.TOOL, key_file=wrong_key)  # not this installation's
    impostor = lan_endpoint(lan, Agent.STRATEGY)  # the key, but no agent that may ask
    try:
        booted_healthy(board, statuses)
        writes = board.bootloader_writes()
        command = OtaCommand(board="pole", action="install", url=str(bundle))
        outsider.send(command)
        impostor.send(command)  # signed, but receivers drop it (catalogue.SENDERS)
        sent = time.monotonic()
        later = statuses.wait("pole", lambda s: time.monotonic() - sent > 1.0, 10)

        assert later.state == "idle"
        assert "installing" not in statuses.states("pole")
        assert board.bootloader_writes() == writes
        assert board.stop_agent("update_agent") == 0
        counters = board.log("update_agent").splitlines()[-1]
        drops = dict(re.findall(r"'(\w+)': (\d+)", counters.partition("drops=")[2]))
        assert int(drops.get("mac", 0)) >= 1 and int(drops.get("sender", 0)) >= 1, counters
    finally:
        outsider.close()
        impostor.close()
    wait_for("nothing installing", lambda: board.rauc().properties()["Operation"] == "idle", 5)
