"""A person in a browser plays the human's rods: the page's messages -> RodCommands (unit,
no clock, no server), then the real server with a WebSocket client on a LiveTable stepped
by hand, then (when Debian's chromium is there) the real page's keys and mouse."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="the browser player needs aiohttp (the panels extra)")

import aiohttp

from foosball.geometry import default_table
from foosball.sim.browser_player import (
    KEY_SPEED,
    KICK_FORWARD,
    KICK_SPEED,
    LIFT,
    BrowserPlayer,
    PlayerIntent,
)
from foosball.sim.live import LiveTable
from foosball.wire.catalogue import RodCommand, RodId, RodPosition, RodStatus

TABLE = default_table()
GOALKEEPER, DEFENCE, MIDFIELD, ATTACK = range(4)


def rods(translations: tuple[float, ...] = (0.0,) * 4,
         rotations: tuple[float, ...] = (0.0,) * 4) -> RodStatus:
    """Measured rods in the human's own frame."""
    return RodStatus(tuple(RodPosition(RodId(i), t, r, 0.0, 0.0)
                           for i, (t, r) in enumerate(zip(translations, rotations, strict=True))))


def targets(command: RodCommand | None) -> dict[int, Any]:
    assert command is not None
    return {int(t.rod): t for t in command.rods}


def intent(*messages: dict[str, Any]) -> PlayerIntent:
    player = PlayerIntent(TABLE)
    for message in messages:
        assert player.apply(message), message
    return player


# --- the intent -> RodCommand mapping ------------------------------------------------------


def test_untouched_rods_are_left_alone():
    assert intent().command(rods(), 0) is None
    command = intent({"rod": ATTACK}, {"move": 1}).command(rods(), 0)
    assert set(targets(command)) == {ATTACK}  # the other three hold where they are


def test_a_held_key_runs_the_rod_to_its_end_and_letting_go_holds_it_there():
    player = intent({"rod": ATTACK}, {"move": 1})
    attack = targets(player.command(rods(), 0, capture_time=77))[ATTACK]
    assert attack.translation == pytest.approx(0.1185)  # travel end, towards +y (up)
    assert attack.translation_speed == KEY_SPEED
    assert attack.rotation == 0.0
    assert player.apply({"move": -1})
    down = targets(player.command(rods(), 0))[ATTACK]
    assert down.translation == pytest.approx(-0.1185)
    assert player.apply({"move": 0})
    held = targets(player.command(rods(translations=(0.0, 0.0, 0.0, -0.031)), 0))[ATTACK]
    assert held.translation == pytest.approx(-0.031)  # where it was when the key came up
    assert held.translation_speed == 0.0
    # and it stays there while the rod settles
    settled = targets(player.command(rods(translations=(0.0, 0.0, 0.0, -0.035)), 0))[ATTACK]
    assert settled.translation == pytest.approx(-0.031)


def test_the_man_nearest_the_pointer_goes_under_it():
    goalkeeper = intent({"point": 0.05})
    assert targets(goalkeeper.command(rods(), 0))[GOALKEEPER].translation == pytest.approx(0.05)
    assert goalkeeper.apply({"point": 0.3})  # beyond its travel: as far as it goes
    assert targets(goalkeeper.command(rods(), 0))[GOALKEEPER].translation == pytest.approx(0.123)
    # the midfield (5 men, 0.12 m apart, +-0.0615 m travel): the fourth man takes y = 0.16
    midfield = intent({"rod": MIDFIELD}, {"point": 0.16})
    target = targets(midfield.command(rods(), 0))[MIDFIELD]
    assert target.translation == pytest.approx(0.04)
    assert target.translation_speed == 0.0  # as fast as the hands go


def test_the_pointer_man_does_not_flip_where_two_men_reach():
    # y = 0.18 is within reach of the fourth man (t = +0.06) and the fifth (t = -0.06)
    from_below = intent({"rod": MIDFIELD}, {"point": 0.15}, {"point": 0.18})
    from_above = intent({"rod": MIDFIELD}, {"point": 0.25}, {"point": 0.18})
    assert targets(from_below.command(rods(), 0))[MIDFIELD].translation == pytest.approx(0.06)
    assert targets(from_above.command(rods(), 0))[MIDFIELD].translation == pytest.approx(-0.06)


def test_a_kick_swings_forward_fast_then_back_upright():
    player = intent({"rod": DEFENCE}, {"kick": True})
    measured = (0.0, 0.07, 0.0, 0.0)  # a rod never moved is kicked where it stands
    strike = targets(player.command(rods(measured), 1_000_000_000))[DEFENCE]
    assert (strike.rotation, strike.rotation_speed) == (KICK_FORWARD, KICK_SPEED)
    assert strike.translation == pytest.approx(0.07)
    still_striking = targets(player.command(rods(measured, (0, 0.6, 0, 0)), 1_010_000_000))
    assert still_striking[DEFENCE].rotation == KICK_FORWARD
    back = targets(player.command(rods(measured, (0, 1.4, 0, 0)), 1_020_000_000))[DEFENCE]
    assert (back.rotation, back.rotation_speed) == (0.0, 0.0)
    # a second kick once it is upright again
    assert player.command(rods(measured, (0, 0.1, 0, 0)), 1_040_000_000) is not None
    assert player.apply({"kick": True})
    again = targets(player.command(rods(measured), 1_050_000_000))[DEFENCE]
    assert again.rotation == KICK_FORWARD


def test_a_blocked_kick_swings_back_after_a_while():
    player = intent({"kick": True})
    assert targets(player.command(rods(), 0))[GOALKEEPER].rotation == KICK_FORWARD
    stuck = rods(rotations=(0.3, 0, 0, 0))
    assert targets(player.command(stuck, 200_000_000))[GOALKEEPER].rotation == KICK_FORWARD
    assert targets(player.command(stuck, 300_000_000))[GOALKEEPER].rotation == 0.0


def test_a_kick_goes_on_when_another_rod_is_chosen():
    player = intent({"rod": ATTACK}, {"kick": True}, {"rod": MIDFIELD}, {"move": 1})
    command = targets(player.command(rods(), 0))
    assert command[ATTACK].rotation == KICK_FORWARD
    assert command[MIDFIELD].translation == pytest.approx(0.0615)


def test_lifting_and_choosing_another_rod():
    player = intent({"rod": MIDFIELD}, {"lift": True})
    assert targets(player.command(rods(), 0))[MIDFIELD].rotation == LIFT
    assert player.apply({"move": 1})
    assert player.apply({"rod": ATTACK})  # the rod left stops and puts its feet down
    left = targets(player.command(rods(translations=(0, 0, 0.02, 0)), 0))[MIDFIELD]
    assert (left.translation, left.rotation) == (pytest.approx(0.02), 0.0)
    assert player.moving == 0  # the key does not carry over to the new rod


def test_release_lets_go_of_every_key():
    player = intent({"rod": ATTACK}, {"move": -1}, {"lift": True})
    player.release()
    attack = targets(player.command(rods(translations=(0, 0, 0, -0.05)), 0))[ATTACK]
    assert (attack.translation, attack.rotation) == (pytest.approx(-0.05), 0.0)


@pytest.mark.parametrize("message", [
    {"rod": 4}, {"rod": -1}, {"rod": True}, {"rod": "2"}, {"move": 2}, {"move": 0.5},
    {"point": "up"}, {"point": math.nan}, {"point": 5.0}, {"point": None}, {"kick": 1},
    {"lift": "yes"}, {"rod": 1, "move": 1}, {}, {"shoot": True},
])
def test_anything_else_is_ignored(message):
    player = PlayerIntent(TABLE)
    assert not player.apply(message)
    assert player.command(rods(), 0) is None


def test_the_player_reads_text_and_counts_what_it_took():
    player = BrowserPlayer(TABLE, port=0)  # not started: handle() needs no server
    assert player.handle('{"rod": 3}')
    assert not player.handle("not json")
    assert not player.handle('["rod", 3]')
    assert not player.handle(json.dumps({"point": 0.0, "pad": "x" * 2000}))
    assert player.inputs == 1
    assert player.intent.active == ATTACK


# --- the server, a WebSocket client, a live table stepped by hand --------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def live() -> Iterator[tuple[LiveTable, FakeClock]]:
    clock = FakeClock()
    table = LiveTable("browser", seed=3, monotonic=clock, player_port=0,
                      player_host="127.0.0.1")
    table.advance()  # starts the table's clock
    try:
        yield table, clock
    finally:
        table.close()


def play(table: LiveTable, clock: FakeClock, seconds: float) -> None:
    """Real time passes in steps the table plays without skipping."""
    for _ in range(round(seconds / 0.05)):
        clock.now += 0.05
        table.advance()


def human_pose(table: LiveTable, role: str) -> tuple[float, float]:
    """(translation, rotation) of a human rod in the human's own frame."""
    t, r, _, _ = table.world.rod_pose(table.world.rod_index(f"human_{role}"))
    return -t, -r


async def until(condition: Any, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


def test_a_websocket_client_moves_and_kicks_the_human_rods(live):
    table, clock = live
    player = table.player
    assert isinstance(player, BrowserPlayer)
    assert player.url == f"http://127.0.0.1:{player.port}/"
    commands: list[RodCommand] = []
    step = player.step

    def recording(ball, rods, now_ns):
        command = step(ball, rods, now_ns)
        if command is not None:
            commands.append(command)
        return command

    player.step = recording  # type: ignore[method-assign]

    async def session() -> float:
        async with aiohttp.ClientSession() as http:
            async with http.get(player.url) as page:
                assert page.status == 200
                assert "Controls" in await page.text()
            async with http.get(player.url + "static/player.js") as script:
                assert script.status == 200
            async with http.ws_connect(player.url + "ws") as ws:
                layout = json.loads((await ws.receive(timeout=5)).data)["layout"]
                assert len(layout["rods"]) == 8 and len(layout["mine"]) == 4
                sent = player.inputs

                async def send(message: dict[str, Any]) -> None:
                    nonlocal sent
                    await ws.send_str(json.dumps(message))
                    sent += 1
                    await until(lambda: player.inputs >= sent)

                # the mouse: the midfield's man nearest y = 0.16 goes there
                await send({"rod": MIDFIELD})
                await send({"point": 0.16})
                play(table, clock, 0.3)
                assert targets(commands[-1])[MIDFIELD].translation == pytest.approx(0.04)
                assert human_pose(table, "midfield")[0] == pytest.approx(0.04, abs=1e-3)
                # the page is shown the table: the rod where it went, in the human's frame
                index = table.world.rod_index("human_midfield")
                while True:
                    message = json.loads((await ws.receive(timeout=5)).data)
                    shown = message["state"]
                    if shown["translations"][index] == pytest.approx(0.04, abs=1e-3):
                        break
                assert shown["active"] == MIDFIELD

                # the keys: the attack rod up while the key is held, then it stays
                await send({"rod": ATTACK})
                await send({"move": 1})
                play(table, clock, 0.1)
                moving = human_pose(table, "attack")[0]
                assert 0.02 < moving < 0.1185
                await send({"move": 0})
                play(table, clock, 0.3)
                stopped = human_pose(table, "attack")[0]
                assert moving < stopped < 0.1185
                play(table, clock, 0.2)
                assert human_pose(table, "attack")[0] == pytest.approx(stopped, abs=1e-4)
                assert human_pose(table, "midfield")[0] == pytest.approx(0.04, abs=1e-3)

                # a kick: forward past the ball, then back upright
                await send({"kick": True})
                highest = 0.0
                for _ in range(10):
                    clock.now += 0.01
                    table.advance()
                    highest = max(highest, human_pose(table, "attack")[1])
                assert highest > 1.2
                play(table, clock, 0.3)
                assert abs(human_pose(table, "attack")[1]) < 0.05
                kicks = [targets(c)[ATTACK] for c in commands if ATTACK in targets(c)]
                assert any(t.rotation == KICK_FORWARD for t in kicks)

                # a key held when the page goes away is let go
                await send({"move": -1})
        await until(lambda: player.intent.moving == 0)
        return stopped

    stopped = asyncio.run(session())
    play(table, clock, 0.5)
    assert human_pose(table, "attack")[0] == pytest.approx(stopped, abs=1e-3)
    # the robot's side never heard of any of it
    robot = [table.world.rod_pose(table.world.rod_index(r.name)) for r in TABLE.robot_rods]
    assert all(t == 0.0 and r == 0.0 for t, r, _, _ in robot)


def test_a_taken_port_is_an_error():
    first = BrowserPlayer(TABLE, host="127.0.0.1", port=0)
    first.start()
    try:
        second = BrowserPlayer(TABLE, host="127.0.0.1", port=first.port)
        with pytest.raises(OSError):
            second.start()
    finally:
        first.close()


# --- the real page in Debian's chromium ------------------------------------------------------


def test_the_page_in_chromium_plays_with_keys_and_mouse(tmp_path):
    from tests.panels.game_rig import CHROMEDRIVER, CHROMIUM, open_chromium

    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("needs Debian's chromium and chromium-driver")
    pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from tests.panels.game_rig import wait_for

    player = BrowserPlayer(TABLE, host="127.0.0.1", port=0)
    player.start()
    driver = open_chromium(1100, 700, user_data_dir=tmp_path / "profile")
    try:
        driver.get(player.url)
        wait_for(lambda: driver.find_element(By.ID, "link").text == "PLAYING", 10,
                 "the page's WebSocket")
        canvas = driver.find_element(By.ID, "table")
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys("3")
        wait_for(lambda: player.intent.active == MIDFIELD, what="key 3 choosing the midfield")
        assert driver.find_element(By.ID, "active").text == "midfield"
        ActionChains(driver).key_down(Keys.ARROW_UP).perform()
        wait_for(lambda: player.intent.moving == 1, what="the up key held")
        ActionChains(driver).key_up(Keys.ARROW_UP).perform()
        wait_for(lambda: player.intent.moving == 0, what="the up key let go")
        body.send_keys(Keys.TAB)
        wait_for(lambda: player.intent.active == ATTACK, what="Tab: the next rod")
        body.send_keys("1")
        wait_for(lambda: player.intent.active == GOALKEEPER, what="key 1: the goalkeeper")
        # the pointer an eighth of the page's table above its middle (about +0.095 m)
        inputs = player.inputs
        height = canvas.size["height"]
        ActionChains(driver).move_to_element_with_offset(canvas, 0, -height // 8).perform()
        wait_for(lambda: player.inputs > inputs, what="the pointer's position")
        command = targets(player.step(_ball(), rods(), 0))
        assert 0.07 < command[GOALKEEPER].translation < 0.12  # up on the page is +y
        ActionChains(driver).click().perform()
        wait_for(lambda: targets(player.step(_ball(), rods(), 1))[GOALKEEPER].rotation
                 == KICK_FORWARD, what="a click kicking")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors
    finally:
        driver.quit()
        player.close()


def _ball() -> Any:
    from foosball.wire.catalogue import BallState, BallStatus

    return BallState(0, 0, 0.0, 0.0, 0.0, 0.0, (0.0, 0.0, 0.0, 0.0), BallStatus.LOST)


# --- the rig: `foosball rig up --opponent browser` (its parts, no rig started) -------------


def test_the_rigs_camera_is_told_to_serve_the_players_page(tmp_path, monkeypatch):
    from foosball.rig.rig import PLAYER_PORT, Rig, RigOptions

    rig = Rig(RigOptions(run_dir=tmp_path, opponent="browser", use_namespaces=False))
    spawned: list[tuple[str, str, list[str]]] = []
    monkeypatch.setattr(rig, "spawn", lambda name, board, args, clock_of=None, umask=-1:
                        spawned.append((name, board, args)))
    rig.start_camera()
    (name, board, args), = spawned
    assert (name, board) == ("camera", rig.camera_board)
    assert args[args.index("--opponent") + 1] == "browser"
    assert args[args.index("--player-port") + 1] == str(PLAYER_PORT) == "8090"


def test_rig_up_forwards_the_players_port_and_prints_its_address(tmp_path, monkeypatch,
                                                                  capsys):
    import signal

    import foosball.rig.cli as rig_cli
    import foosball.rig.forward
    import foosball.rig.rig
    from foosball.cli import main

    forwarded: list[tuple[int, str | None]] = []

    class Forward:
        def __init__(self, port: int, namespace: str | None) -> None:
            forwarded.append((port, namespace))

        def close(self) -> None:
            pass

    class FakeLan:
        def namespace(self, board: str) -> str:
            return f"ns-{board}"

    class FakeRig:  # what `rig up` uses of a Rig, nothing started
        def __init__(self, options: Any) -> None:
            self.options, self.namespaced, self.lan = options, True, FakeLan()
            self.camera_board, self.processes, self.logs = "pole", {}, tmp_path
            self.mode = "processes"  # namespaced processes: the ports forwarded from the host

        def up(self) -> None:
            self.options.run_dir.mkdir()

        def describe(self) -> str:
            return "a fake rig"

        def down(self) -> dict[str, int]:
            return {}

    monkeypatch.setattr(foosball.rig.forward, "PortForward", Forward)
    monkeypatch.setattr(foosball.rig.rig, "Rig", FakeRig)
    monkeypatch.setattr(rig_cli, "_agents", lambda: ("motor_driver", "ball_tracker"))
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        assert main(["rig", "up", "--opponent", "browser", "--run-dir", str(tmp_path / "run"),
                     "--for", "0.01"]) == 0
    finally:
        signal.signal(signal.SIGTERM, handlers[0])
        signal.signal(signal.SIGINT, handlers[1])
    assert forwarded == [(8090, "ns-pole")]
    assert "  you play the human's rods: http://localhost:8090/\n" in capsys.readouterr().out
