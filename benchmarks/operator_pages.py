"""Issue 29's page items, seen: the game panel in headless Chromium at the board's 800x480
with no token, after a second of two repeating alarms, with the human's rods measured by
the camera and after a ball seen past the end wall (the in-process rig of the panel tests,
tests/panels/game_rig). Writes OUT/game-panel-items.png and prints what the page says.

    flock /tmp/foosball-measure.lock .venv/bin/python benchmarks/operator_pages.py OUT
Run with PYTHONPATH pointing at another tree to see that tree ("before").
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.panels.game_rig

from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    BallStatus,
    HumanRod,
    HumanRods,
    RodId,
)
from tests.panels.game_rig import TABLE, Rig, open_chromium, wait_for


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="operator-pages-") as tmp:
        rig = Rig(Path(tmp))
        driver = open_chromium(user_data_dir=Path(tmp) / "profile")
        try:
            driver.get(rig.url)  # no #token=: a page opened by someone without one
            wait_for(lambda: driver.execute_script("return window.panelStats.connected"), 10)
            wait_for(lambda: driver.find_element("id", "state").text == "READY", 10)
            tracker = rig.endpoint(Agent.BALL_TRACKER)
            senders = (rig.mda_alarms, rig.endpoint(Agent.POLE_DRIVER))
            repeats = [Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT,
                             text="overcurrent on axis 3", latched=False, axis=3),
                       Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.HEARTBEAT_MISSING,
                             text="strategy silent", latched=False, axis=-1)]
            for _ in range(10):  # a second of two causes, each repeated every 100 ms
                for sender, alarm in zip(senders, repeats, strict=True):
                    sender.send(alarm)
                time.sleep(0.1)  # as an agent repeats a present cause
            rods = HumanRods(capture_time=time.time_ns(), frame=1, rods=tuple(
                HumanRod(rod=RodId(r), translation=0.05 * (r - 1.5), rotation=0.3,
                         men_seen=2, rotation_seen=True) for r in range(4)))
            for _ in range(5):
                tracker.send(rods)
                time.sleep(0.05)
            half = TABLE.field.half_length
            rig.ball.play([(half - 0.05, 0.15, BallStatus.DETECTED)] * 20
                          + [(half + 0.03, 0.15, BallStatus.DETECTED)] * 20
                          + [(0.2, -0.1, BallStatus.DETECTED)] * 400)
            wait_for(lambda: rig.ball.idle, 10)
            time.sleep(0.5)  # a few frames drawn after the last state
            driver.save_screenshot(str(out / "game-panel-items.png"))
            shown = driver.execute_script(
                "const t = (id) => document.getElementById(id);"
                "return {start_disabled: t('start').disabled, start_title: t('start').title,"
                " view_only: t('view-only') ? !t('view-only').hidden : null,"
                " alarms: [...t('alarms').children].map((li) => li.textContent),"
                " legend: document.querySelector('.legend').textContent.trim(),"
                " address: location.href}")
            print(json.dumps(shown, indent=1))
        finally:
            driver.quit()
            rig.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
