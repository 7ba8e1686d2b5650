"""Game panel agent (GPA): the game's owner and the strategy board's page.

Pure core: `GamePanelCore.step(Inputs) -> Outputs` (foosball.runtime). Its hardware is
the web page (foosball.panels.server.PanelHardware): `inputs.sensed` is the operator's
actions from the page (token already checked), `Outputs.actuation` the page's topics.

The game (DESIGN.md's safety states), as sent in GameState at 10 Hz and on every change:

- BOOT until the motor driver's MotorStatus is heard; ALIGNING or HOMING while any drive is;
  PAUSED while any drive is in QUICK_STOP or FAULT (halted on the supervisory panel, or
  stopped by the motor driver): START is refused until every drive is ready again;
- READY: drives ready, no match running. START begins a new match (score 0:0, clock 0);
- PLAYING <-> PAUSED with PAUSE and START; the match clock runs only while PLAYING;
- STOP ends the match (back to READY; the final score stays shown until the next START);
- FAULT while the runtime's latch is set (inputs.safety), with its causes as alarm_text. A
  RESTART leaves it only once every cause is gone (the runtime's latch decides, for every
  agent alike); the match then waits PAUSED (or the drives' ALIGNING/HOMING first) for a
  START: nothing resumes by itself. Whenever the game leaves PLAYING for FAULT or for drives
  that are not ready, the match is PAUSED.

GameControl from the wire (`foosball wire send GameControl command=PAUSE`, the supervisory
panel) and from the page follow the same rules: a page action becomes a GameControl the
core sends, and the runtime hands every GameControl the core sends back to the core as a
message (runtime/loop.py), so the core applies each one exactly once, in order, from one path.

Score: goals are counted by `GoalDetector` (goals.py, whose docstring has the rules);
only goals during PLAYING count, and a goal not yet confirmed when a match starts or
resumes went in while nobody played, and is forgotten.

Camera calibration: the ball tracker's CalibrationStatus (1 Hz) goes to the page with what
to worry about: no report for `calibration_silence_s`, no date, or a reprojection error
above `calibration_warn_rms_px` (GamePanelConfig says why 1.5 px).

Guided camera calibration (the page's Camera tab, calibration.py): Look and Calibrate
are CameraCalibration requests to the ball tracker, which has the camera (on the vision
board) and runs them on its own frames beside its tracking; its reply (the markers found
and missing and why, the verdict with each marker's residual) and the annotated frame
(CameraSnapshot parts) are drawn. An accepted calibration is saved and used by the tracker
at once. Not while a match is playing. The panel opens no camera and has no vision code.

Vision tuning: the page's sliders send VisionConfig; its "learn from the ball" sends a
VisionLearn request (not while a match is playing: the tracker's board learns for seconds
beside its tracking), and the tracker's reply, the band now in use or why none was taken,
is shown with the thresholds.

The package: `core` (GamePanelCore, GamePanelConfig: the game, the page's actions),
`goals` (GoalDetector: when a ball went in), `views` (what the page shows of the ball, the
rods, the calibration and the vision settings), `calibration` (PanelCalibrating: the
Camera tab's requests and the tracker's replies). What other modules use is named here.
"""

from foosball.agents.game_panel.core import (
    ACTIONS,
    LEARN_FRAMES,
    GamePanelConfig,
    GamePanelCore,
    vision_from_detector,
)
from foosball.agents.game_panel.goals import (
    GOAL_CONFIRM_S,
    MOUTH_MARGIN_M,
    NEAR_GOAL_M,
    SERVE_WINDOW_S,
    GoalDetector,
)

__all__ = ["ACTIONS", "GOAL_CONFIRM_S", "LEARN_FRAMES", "MOUTH_MARGIN_M", "NEAR_GOAL_M",
           "SERVE_WINDOW_S", "GamePanelConfig", "GamePanelCore", "GoalDetector",
           "vision_from_detector"]
