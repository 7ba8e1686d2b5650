"""The game panel's "learn from the ball": a VisionLearn request to the tracker, refused
while a match plays or one is under way, and the tracker's answer shown with the
thresholds (a passed-in clock)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from foosball.agents.game_panel import LEARN_FRAMES, GamePanelCore
from foosball.geometry import default_table
from foosball.panels.server import PanelAction
from foosball.runtime import Inputs
from foosball.wire.catalogue import (
    AxisStatus,
    DriveState,
    GameControl,
    LearnStage,
    MotorStatus,
    VisionLearn,
)

READY = MotorStatus(axes=tuple(AxisStatus(axis=a, state=DriveState.READY, position=0.0,
                                          velocity=0.0, current=0.0, fault_code=0)
                               for a in range(8)))


class Panel:
    def __init__(self) -> None:
        self.core = GamePanelCore(default_table())
        self.now = 10.0
        self.echo: tuple[Any, ...] = ()
        self.step(READY)

    def step(self, *messages: Any, actions: tuple = ()) -> tuple[Any, ...]:
        self.now += 0.01
        out = self.core.step(Inputs(self.now, (*self.echo, *messages), actions or None))
        self.echo = tuple(m for m in out.messages if isinstance(m, GameControl))
        self.vision = out.actuation["vision"]
        self.notice = out.actuation["game"]["notice"]
        return out.messages

    def act(self, name: str) -> list[VisionLearn]:
        sent = self.step(actions=(PanelAction(name, {}, "192.0.2.7", 1_700_000_000.0),))
        self.step()  # a GameControl's echo applies
        return [m for m in sent if isinstance(m, VisionLearn)]


def reply(request: int, stage: LearnStage, text: str, **band: int) -> VisionLearn:
    values = dict.fromkeys(("hue_low", "hue_high", "sat_low", "sat_high", "val_low",
                            "val_high"), 0) | band
    return VisionLearn(request=request, stage=stage, frames=14 if band else 0, **values,
                       ball_share=0.99 if band else 0.0, table_share=0.001 if band else 0.0,
                       text=text)


def test_learn_asks_the_tracker_and_shows_the_band_it_learnt():
    p = Panel()
    [request] = p.act("learn")
    assert request.stage is LearnStage.REQUEST and request.frames == LEARN_FRAMES
    assert p.vision["learning"]["state"] == "asked"
    assert "roll the ball" in p.vision["learning"]["text"]
    assert p.notice == "learn sent"
    band = {"hue_low": 4, "hue_high": 26, "sat_low": 169, "sat_high": 255, "val_low": 30,
            "val_high": 255}
    p.step(reply(request.request, LearnStage.LEARNT, "learnt from 14 frames with the ball; "
                 "now in use", **band))
    learning = p.vision["learning"]
    assert learning["state"] == "learnt" and learning["band"] == band
    assert learning["frames"] == 14 and learning["ball_share"] == 0.99
    # The sliders show the tracker's band now; the blob limits stay as they were.
    assert {k: p.vision["config"][k] for k in band} == band
    assert p.vision["config"]["min_area"] == 40.0


def test_a_refusal_is_shown_with_its_reason_and_the_thresholds_stay():
    p = Panel()
    before = dict(p.vision["config"])
    [request] = p.act("learn")
    p.step(reply(request.request, LearnStage.REFUSED, "cannot tell the ball from the table "
                 "by colour: ... takes in 5.7% of the rest of the frame"))
    assert p.vision["learning"]["state"] == "refused"
    assert p.vision["learning"]["text"].startswith("cannot tell the ball from the table")
    assert p.vision["config"] == before


def test_not_while_playing_nor_twice_at_once():
    p = Panel()
    p.act("start")
    assert p.act("learn") == []
    assert p.notice.startswith("learn refused: not while a match is playing")
    p.act("pause")
    [first] = p.act("learn")
    assert p.act("learn") == []
    assert p.notice == f"learn refused: request {first.request} is still under way"
    p.step(reply(first.request, LearnStage.REFUSED, "the ball did not move"))
    [second] = p.act("learn")
    assert second.request == first.request + 1


def test_its_own_requests_are_not_taken_for_answers():
    p = Panel()
    [request] = p.act("learn")
    p.step(replace(request, request=99))  # another panel's request, heard on the LAN
    assert p.vision["learning"]["state"] == "asked"


def test_a_request_without_an_answer_is_given_up_after_a_minute():
    p = Panel()
    [first] = p.act("learn")
    p.now += 59.0
    assert p.act("learn") == []
    p.now += 2.0
    [second] = p.act("learn")
    assert second.request == first.request + 1
