"""Match recorder agent on the strategy board: every message of a match appended to the
data partition as a CBOR sequence (foosball.recording), rotated.

The package: `core` (MatchRecorderCore, the pure step; MatchRecorderConfig, its
`[match_recorder]` settings; RecordingHardware, the writer behind it). What other modules
use is named here.
"""

from foosball.agents.match_recorder.core import (
    RECORDED,
    FileOp,
    MatchRecorderConfig,
    MatchRecorderCore,
    RecordingHardware,
    match_id,
)

__all__ = ["RECORDED", "FileOp", "MatchRecorderConfig", "MatchRecorderCore",
           "RecordingHardware", "match_id"]
