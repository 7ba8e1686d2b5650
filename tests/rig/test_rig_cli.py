"""`foosball rig up` as a newcomer runs it, then `foosball rig down` and Ctrl-C: the panels
answer on localhost while it runs, and afterwards no namespace, process or port is left.
Root only (the namespaced rig); skipped elsewhere with the reason."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from foosball.rig import MODES
from foosball.rig.booted import booted_unavailable
from foosball.rig.network import netns_unavailable
from foosball.rig.rig import PANEL_PORTS
from foosball.rig.rootfs import debian_root, mounts_under

pytestmark = pytest.mark.skipif(netns_unavailable() is not None,
                                reason=f"the namespaced rig: {netns_unavailable()}")

UP_WITHIN_S = 60.0


def port_taken(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in listed.splitlines() if line.strip()}


def processes_of(run_dir: Path) -> list[str]:
    """"PID command line" of every process naming the run dir (whole command lines: `ps`
    cuts them at 80 columns when its output is not a terminal)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if str(run_dir) in line:
            found.append(f"{process.info['pid']} {line}")
    return found


def rig_up(run_dir: Path, mode: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    """Starts `foosball rig up`; returns it, its namespaces' prefix and what it printed
    up to 'stops everything' (the panels' addresses)."""
    up = subprocess.Popen([sys.executable, "-m", "foosball.cli", "rig", "up", "--run-dir",
                           str(run_dir), "--fps", "50", "--mode", mode], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    printed: list[str] = []
    deadline = time.monotonic() + UP_WITHIN_S
    assert up.stdout is not None
    while time.monotonic() < deadline:
        line = up.stdout.readline()
        if not line:
            break
        printed.append(line.rstrip())
        if "stops everything" in line:
            break
    text = "\n".join(printed)
    prefix = re.search(r"network namespaces (\w+)-\{", text)
    assert prefix is not None and "stops everything" in text, text
    assert f"rig: {MODES[mode]}, starting" in text, text  # it says which mode it runs
    return up, prefix.group(1), printed


@pytest.mark.parametrize(("stop", "mode"), [("rig down", "booted"), ("Ctrl-C", "processes")])
def test_rig_up_serves_the_panels_and_stopping_it_leaves_nothing(tmp_path, stop, mode):
    if mode == "booted" and booted_unavailable() is not None:
        pytest.skip(f"booted boards: {booted_unavailable()}")
    if any(port_taken(port) for port in PANEL_PORTS.values()):
        pytest.skip(f"a panel port of {sorted(PANEL_PORTS.values())} is in use (a rig "
                    "running already?)")
    if mode == "booted":
        debian_root()  # the boards' cached root, built once on a new machine (minutes):
        # the SD card made before the rig is switched on, not part of its start-up time
    run_dir = tmp_path / "rig"
    before = namespaces()
    up, prefix, printed = rig_up(run_dir, mode)
    try:
        for agent, port in PANEL_PORTS.items():
            address = next(line.split(": ", 1)[1] for line in printed
                           if line.strip().startswith(agent.replace("_", " ")))
            assert address.startswith(f"http://localhost:{port}/#token="), address
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
                assert page.status == 200 and b"<html" in page.read().lower()
        assert {f"{prefix}-{board}" for board in ("lan", "pole", "vision", "strategy")} \
            <= namespaces()
        if stop == "rig down":
            down = subprocess.run([sys.executable, "-m", "foosball.cli", "rig", "down",
                                   "--run-dir", str(run_dir)], capture_output=True, text=True,
                                  timeout=60)
            assert down.returncode == 0, down.stdout + down.stderr
        else:
            up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert up.stdout is not None
    said = up.stdout.read()
    assert "rig down:" in said, said
    assert namespaces() == before, f"left behind: {namespaces() - before}"
    assert not any(name.startswith(prefix) for name in namespaces())
    assert processes_of(run_dir) == []
    assert mounts_under(run_dir) == []  # a booted board's root overlay unmounted
    assert not any(port_taken(port) for port in PANEL_PORTS.values())
    assert (run_dir / "logs" / "motor_driver.log").exists()  # the logs are kept


def test_an_agent_that_exits_stops_the_processes_rig_with_its_name_and_status_1(tmp_path):
    """Without a systemd to restart it, a dead agent leaves the rig not what it says it is."""
    if any(port_taken(port) for port in PANEL_PORTS.values()):
        pytest.skip(f"a panel port of {sorted(PANEL_PORTS.values())} is in use")
    run_dir = tmp_path / "rig"
    up, _, _ = rig_up(run_dir, "processes")
    try:
        strategy = next(int(line.split()[0]) for line in processes_of(run_dir)
                         if "agent run strategy" in line)
        os.kill(strategy, signal.SIGKILL)
        assert up.wait(timeout=60) == 1
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert up.stdout is not None
    assert "strategy exited with signal SIGKILL" in up.stdout.read()
