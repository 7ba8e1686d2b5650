"""Issue 30 (passing): main against variant a (or A+B, `branch`) on seeds 10400-10499: the
totals per opponent and pooled, with bootstrap 95 % intervals of the difference. The code
that was here is now `benchmarks/paired_tournaments.py` (the seventh session's notes use it
too); this keeps the command below working.

    python3 docs/notes/issue-30-passing/paired.py docs/notes/issue-30-passing/out a   (or branch)
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    folder, side = sys.argv[1:3]
    sys.argv = [sys.argv[0], folder, "main", side]
    runpy.run_path(str(Path(__file__).resolve().parents[3] / "benchmarks" /
                       "paired_tournaments.py"), run_name="__main__")
