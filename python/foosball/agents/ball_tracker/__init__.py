"""Ball tracker agent (BTA), the vision board's agent: camera frames -> BallState.

The package: `core` (BallTrackerCore, the pure step; the messages it makes; the learning
job it hands its hardware). What other modules use is named here.
"""

from foosball.agents.ball_tracker.core import (
    CALIBRATION_PERIOD_S,
    LEARN_EVERY,
    BallTrackerCore,
    Camera,
    LearnJob,
    LearnOutcome,
    ball_state,
    calibration_status,
    human_rods,
    learn_reply,
    run_learn_job,
)

__all__ = ["CALIBRATION_PERIOD_S", "LEARN_EVERY", "BallTrackerCore", "Camera", "LearnJob",
           "LearnOutcome", "ball_state", "calibration_status", "human_rods", "learn_reply",
           "run_learn_job"]
