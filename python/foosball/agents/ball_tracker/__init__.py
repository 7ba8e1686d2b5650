"""Ball tracker agent (BTA), the vision board's agent: camera frames -> BallState.

The package: `core` (BallTrackerCore, the pure step; the messages it makes; the learning
job it hands its hardware), `calibrating` (the game panel's guided camera calibration:
the job, its reply and snapshot), `hardware` (Camera: the frame source, the kept
thresholds, the calibration file, the worker for learning and calibrating), `build`
(make_tracker: the core and its camera from the checked settings). Its settings are
vision.json's (foosball.vision.config); its registry entry (foosball.agent_registry) puts
what `build` makes in the runtime. What other modules use is named here.
"""

from foosball.agents.ball_tracker.build import make_tracker
from foosball.agents.ball_tracker.calibrating import (
    CalibrationJob,
    CalibrationOutcome,
    run_calibration_job,
)
from foosball.agents.ball_tracker.core import (
    CALIBRATION_PERIOD_S,
    LEARN_EVERY,
    BallTrackerCore,
    LearnJob,
    LearnOutcome,
    ball_state,
    calibration_status,
    human_rods,
    learn_reply,
    run_learn_job,
)
from foosball.agents.ball_tracker.hardware import Camera

__all__ = ["CALIBRATION_PERIOD_S", "LEARN_EVERY", "BallTrackerCore", "CalibrationJob",
           "CalibrationOutcome", "Camera", "LearnJob",
           "LearnOutcome", "ball_state", "calibration_status", "human_rods", "learn_reply",
           "make_tracker", "run_calibration_job", "run_learn_job"]
