"""`kill -USR1` on any foosball process writes every thread's stack and carries on: the
rig asks a process that does not stop where it hangs before it kills it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def test_sigusr1_writes_the_stacks_and_the_process_carries_on(tmp_path: Path) -> None:
    socket_path = tmp_path / "camera.sock"
    camera = subprocess.Popen([sys.executable, "-m", "foosball.cli", "sim", "camera",
                               "--socket", str(socket_path), "--fps", "5"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert camera.stdout is not None
        assert "camera:" in camera.stdout.readline()  # serving: past main's first lines
        camera.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        assert camera.poll() is None, "SIGUSR1 must not stop the process"
    finally:
        camera.terminate()
        _, err = camera.communicate(timeout=30)
    assert "most recent call first" in err, err[-2000:]
