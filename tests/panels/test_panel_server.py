"""The shared panel web server: page, topics over the WebSocket, token-checked actions."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

aiohttp = pytest.importorskip("aiohttp", reason="needs the panels extra (aiohttp)")

from foosball.panels.server import (  # noqa: E402
    PanelHardware,
    PanelServer,
    panel_token,
    token_matches,
    write_token_file,
)

KEY = bytes(range(32))
TOKEN = panel_token(KEY)


@pytest.fixture
def panel(tmp_path: Path) -> Iterator[PanelHardware]:
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>")
    (tmp_path / "page.js").write_text("// js")
    server = PanelServer(tmp_path, token=TOKEN, actions={"start", "pause"}, host="127.0.0.1",
                         port=0, wall_time=lambda: 1_700_000_000.0)
    hardware = PanelHardware(server)
    try:
        yield hardware
    finally:
        hardware.close()


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 10.0))


def url(panel: PanelHardware, path: str) -> str:
    return f"http://127.0.0.1:{panel.server.port}{path}"


def test_the_token_is_an_hmac_of_the_wire_key_and_tolerates_how_it_is_typed(tmp_path):
    assert TOKEN == panel_token(KEY) != panel_token(bytes(32))
    assert len(TOKEN.replace("-", "")) == 16
    assert token_matches(TOKEN, TOKEN.upper().replace("-", " "))
    assert not token_matches(TOKEN, TOKEN[:-1]) and not token_matches(TOKEN, None)
    write_token_file(tmp_path / "d" / "panel.token", TOKEN)
    assert (tmp_path / "d" / "panel.token").read_text() == TOKEN + "\n"
    assert (tmp_path / "d" / "panel.token").stat().st_mode & 0o777 == 0o600


def test_viewing_needs_nothing_and_static_files_are_served(panel):
    async def go() -> tuple[int, str, int]:
        async with aiohttp.ClientSession() as session:
            async with session.get(url(panel, "/")) as index:
                text = await index.text()
            async with session.get(url(panel, "/static/page.js")) as js:
                status = js.status
            return index.status, text, status
    assert run(go()) == (200, "<!doctype html><title>t</title>", 200)


def test_a_browser_gets_every_topic_on_connect_then_only_what_changed(panel):
    panel.act({"table": {"length": 1.2}, "ball": {"x": 0.1}})

    async def go() -> list[dict[str, Any]]:
        frames = []
        async with aiohttp.ClientSession() as session, session.ws_connect(
                url(panel, "/ws")) as ws:
            frames.append(json.loads(await ws.receive_str()))
            panel.act({"table": {"length": 1.2}, "ball": {"x": 0.2}})
            frames.append(json.loads(await ws.receive_str()))
        return frames
    first, second = run(go())
    assert first == {"topics": {"ball": {"x": 0.1}, "table": {"length": 1.2}}}
    assert second == {"topics": {"ball": {"x": 0.2}}}


def test_actions_need_the_token_and_an_allowed_name(panel):
    async def go() -> list[dict[str, Any]]:
        replies = []
        async with aiohttp.ClientSession() as session, session.ws_connect(
                url(panel, "/ws")) as ws:
            for request in ({"action": "start", "id": 1},
                            {"action": "start", "token": "abcd", "id": 2},
                            {"action": "reboot", "token": TOKEN, "id": 3},
                            {"action": "start", "token": TOKEN, "args": [1], "id": 4},
                            {"action": "pause", "token": TOKEN, "args": {"a": 1}, "id": 5}):
                await ws.send_str(json.dumps(request))
                replies.append(json.loads(await ws.receive_str())["reply"])
            await ws.send_str("not json")
            replies.append(json.loads(await ws.receive_str())["reply"])
        return replies
    replies = run(go())
    assert [r["accepted"] for r in replies] == [False, False, False, False, True, False]
    assert replies[0]["reason"] == replies[1]["reason"] == "missing or wrong panel token"
    assert replies[2]["reason"] == "no action 'reboot'"
    assert panel.server.counters.refused == {"token": 2, "unknown": 1, "malformed": 2}
    [action] = panel.sense(0.0)
    assert (action.name, dict(action.args), action.remote) == ("pause", {"a": 1}, "127.0.0.1")
    assert action.when == "2023-11-14T22:13:20+00:00"
    assert panel.sense(0.0) is None


def test_an_action_can_be_posted_and_a_refusal_is_403(panel):
    async def go() -> list[tuple[int, bool]]:
        out = []
        async with aiohttp.ClientSession() as session:
            for token in ("", TOKEN):
                body = json.dumps({"action": "start", "token": token})
                async with session.post(url(panel, "/api/action"), data=body) as response:
                    out.append((response.status, (await response.json())["accepted"]))
        return out
    assert run(go()) == [(403, False), (200, True)]
    assert [a.name for a in panel.sense(0.0)] == ["start"]


def test_an_action_wakes_a_waiting_sense(panel):
    shared = threading.Event()
    panel.wake_with(shared)
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(panel.sense(5.0)))
    waiter.start()

    async def go() -> None:
        async with aiohttp.ClientSession() as session:
            body = json.dumps({"action": "start", "token": TOKEN})
            async with session.post(url(panel, "/api/action"), data=body):
                pass
    run(go())
    waiter.join(timeout=5.0)
    assert got and got[0] is not None and got[0][0].name == "start"
    assert not shared.is_set()  # spent by the sense it woke: the next one waits again
