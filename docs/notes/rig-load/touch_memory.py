#!/usr/bin/env python3
"""Touch N MiB of fresh anonymous memory page by page and say how long it took (and when it
ended, CLOCK_MONOTONIC): on a VM that reports freed memory to its host, memory another
process just freed is faulted in by the host again. Beside `placement_probes.py 99`:

    timeout -s TERM 25 python3 placement_probes.py 99 & sleep 2
    python3 touch_memory.py 4096; sleep 2; python3 touch_memory.py 4096
"""

from __future__ import annotations

import mmap
import sys
import time

PAGE = 4096


def main() -> None:
    size = int(sys.argv[1]) << 20
    start = time.monotonic()
    memory = mmap.mmap(-1, size)
    for offset in range(0, size, PAGE):
        memory[offset] = 1
    print(f"touched {size >> 20} MiB in {time.monotonic() - start:.3f} s, "
          f"ending at {time.monotonic():.3f}")


if __name__ == "__main__":
    main()
