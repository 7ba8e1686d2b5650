"""The match recorder's settings: `[match_recorder]` in the strategy board's board.toml."""

from __future__ import annotations

from dataclasses import dataclass

from foosball.schema import SettingError, seconds, setting

MIB = 1024 * 1024


@dataclass(frozen=True)
class MatchRecorderConfig:
    """[match_recorder] in the strategy board's board.toml."""

    # on the data partition (the agents' unit may write /data/foosball only)
    directory: str = "/data/foosball/matches"
    # The rig's traffic at 200 fps is about 20 MiB per 5 minutes (benchmarks/recorder_cost.py,
    # issue 18's note): a file holds a match, the default bound the last ten or so.
    max_file_bytes: int = setting(64 * MIB, low=MIB, high=4096 * MIB, unit="B")
    max_total_bytes: int = setting(256 * MIB, low=2 * MIB, high=65536 * MIB, unit="B")
    # what a power cut may lose at most (an fdatasync this often, on the writer's thread)
    sync_period_s: float = seconds(1.0, high=60.0)

    def __post_init__(self) -> None:
        if self.max_total_bytes < 2 * self.max_file_bytes:
            raise SettingError("[match_recorder] max_total_bytes: at least twice "
                               f"max_file_bytes ({2 * self.max_file_bytes}), not "
                               f"{self.max_total_bytes}")
