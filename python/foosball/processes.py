"""Child processes that never outlive their parent."""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child (before exec, or a pool worker's initializer): SIGTERM when the parent
    dies, however it dies, SIGKILL included (the setting survives exec). A parent that died
    before this call is not noticed: check os.getppid() after it where that can happen."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
