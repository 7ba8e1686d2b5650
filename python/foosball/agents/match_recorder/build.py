"""The match recorder made from its checked settings: the writer on the data partition,
the core and its hardware (the registry's build puts them in the runtime)."""

from __future__ import annotations

from foosball.agents.match_recorder.config import MatchRecorderConfig
from foosball.agents.match_recorder.core import MatchRecorderCore
from foosball.agents.match_recorder.hardware import RecordingHardware
from foosball.geometry import Table
from foosball.recording.writer import RecordingWriter


def make_recorder(table: Table,
                  config: MatchRecorderConfig) -> tuple[MatchRecorderCore, RecordingHardware]:
    writer = RecordingWriter(config.directory, max_file_bytes=config.max_file_bytes,
                             max_total_bytes=config.max_total_bytes,
                             sync_period_s=config.sync_period_s)
    return MatchRecorderCore(table), RecordingHardware(writer)
