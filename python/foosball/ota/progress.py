"""What the panels show of updates: one line per board with an update under way.

Pure, the clock passed in. A board's line appears with its first OtaStatus of an install
and stays through the reboot (when the board is silent) and the health check after it;
it goes with the outcome (updated, failed, rolled back), shown for `outcome_s`.
"""

from __future__ import annotations

from foosball.ota.core import UNDER_WAY, UpdatePhase
from foosball.wire.catalogue import OtaStatus

OUTCOMES = frozenset({UpdatePhase.UPDATED, UpdatePhase.FAILED, UpdatePhase.ROLLED_BACK})


class UpdatesSeen:
    def __init__(self, outcome_s: float = 30.0) -> None:
        self.outcome_s = outcome_s
        self._lines: dict[str, tuple[str, float | None]] = {}  # board -> (line, shown until)

    def observe(self, status: OtaStatus, now_s: float) -> None:
        board, state = status.board, status.state
        updating = board in self._lines and self._lines[board][1] is None
        if state in UNDER_WAY or (state == UpdatePhase.CHECKING and updating):
            percent = f" {status.progress:.0f}%" if state in (UpdatePhase.DOWNLOADING,
                                                              UpdatePhase.INSTALLING) else ""
            self._lines[board] = (f"{board}: update {state}{percent}: {status.text}"[:160],
                                  None)
        elif state in OUTCOMES and updating:
            self._lines[board] = (f"{board}: update {state}: {status.text}"[:160],
                                  now_s + self.outcome_s)

    def lines(self, now_s: float) -> list[str]:
        for board, (_, until) in list(self._lines.items()):
            if until is not None and now_s > until:
                del self._lines[board]
        return [line for line, _ in self._lines.values()]
