"""Stopping `foosball sim tournament --jobs 2` stops its workers too, however it is stopped
(before: SIGTERM or SIGHUP ended the main process alone and the workers played on)."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

TAG = "FOOSBALL_TOURNAMENT_TEST"


def tagged(tag: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(TAG) == tag:
                found.append(process)
        except psutil.Error:
            continue
    return found


def playing(tag: str, main_pid: int) -> list[psutil.Process]:
    """The tournament's processes other than itself that have run a while."""
    busy = []
    for process in tagged(tag):
        try:
            if process.pid != main_pid and process.cpu_times().user > 1.5:
                busy.append(process)
        except psutil.Error:
            continue
    return busy


def wait_for(done: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(("how", "returncode"), [
    ("ctrl-c", 130),  # SIGINT to the whole process group, as a terminal sends it
    ("SIGTERM", 130),
    ("SIGHUP", 130),  # the terminal closed
    ("SIGKILL", -9),  # nothing runs in the main process: the workers die with it
])
def test_stopping_a_tournament_stops_its_workers(how: str, returncode: int,
                                                 tmp_path: Path) -> None:
    tag = secrets.token_hex(4)
    log = (tmp_path / "stderr").open("w+")  # a file: a pipe would wait for every holder
    main = subprocess.Popen(
        ["nice", "-n", "19", sys.executable, "-m", "foosball.cli", "sim", "tournament",
         "--robot", "improved", "--opponent", "club", "--matches", "4", "--jobs", "2",
         "--duration", "120", "--no-progress"],
        env=dict(os.environ, **{TAG: tag}), start_new_session=True,
        # Ctrl-C as a terminal's foreground job has it: a test run started in the background
        # (`./tools/run-tests &`) hands SIGINT down ignored, and a tournament started so
        # rightly ignores it too
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        # both workers started and playing (stopped while starting, a worker's interpreter
        # prints its own "Fatal Python error" on the terminal)
        assert wait_for(lambda: len(playing(tag, main.pid)) >= 2, 60.0), tagged(tag)
        if how == "ctrl-c":
            os.killpg(main.pid, signal.SIGINT)
        else:
            main.send_signal(getattr(signal, how))
        main.wait(timeout=30)
        log.seek(0)
        stderr = log.read()
        assert main.returncode == returncode, stderr[-2000:]
        assert "Traceback" not in stderr, stderr[-2000:]
        assert wait_for(lambda: not tagged(tag), 10.0), tagged(tag)
    finally:
        for process in tagged(tag):
            process.kill()
        if main.poll() is None:
            main.kill()
            main.wait()
        log.close()
