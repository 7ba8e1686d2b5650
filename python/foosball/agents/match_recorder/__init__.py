"""Match recorder agent on the strategy board: every message of a match appended to the
data partition as a CBOR sequence (foosball.recording), rotated.

The package: `core` (MatchRecorderCore, the pure step), `config` (MatchRecorderConfig,
its `[match_recorder]` settings), `hardware` (RecordingHardware, the writer behind the
core), `build` (make_recorder: the writer, the core and its hardware from the settings).
What other modules use is named here.
"""

from foosball.agents.match_recorder.build import make_recorder
from foosball.agents.match_recorder.config import MIB, MatchRecorderConfig
from foosball.agents.match_recorder.core import RECORDED, FileOp, MatchRecorderCore, match_id
from foosball.agents.match_recorder.hardware import RecordingHardware

__all__ = ["MIB", "RECORDED", "FileOp", "MatchRecorderConfig", "MatchRecorderCore",
           "RecordingHardware", "make_recorder", "match_id"]
