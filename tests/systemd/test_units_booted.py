"""The agents' systemd units booted for real.

A Debian root boots under systemd-nspawn with systemd as PID 1 and the repository's unit
files installed as the image installs them. Its agents speak raw Ethernet over a veth link
to an observer on the host side: another board hearing their heartbeats. A hung agent
(SIGSTOP) must be killed by WatchdogSec= and restarted, while its peer keeps beating.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass

import pytest

from foosball.rig.nspawn import Machine, booted, wait_until
from foosball.rig.rootfs import debian_root, install_agents, overlay, user_ids
from foosball.wire.codec import new_key
from tests.netns import veth_link
from tests.systemd.observe import Heartbeats, observing

TOOLS = {"systemd-nspawn": "systemd-container", "debootstrap": "debootstrap",
         "nsenter": "util-linux", "ip": "iproute2"}
MISSING = [f"{tool} ({package})" for tool, package in TOOLS.items() if not shutil.which(tool)]
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="boots a container: needs root (CI runs as root)"),
    pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)}; tools/run-tests "
                       "installs them when run as root"),
]

# Two agents of the strategy board, from only the files its image gets.
BOARD_NAME = "strategy"
AGENTS = ("match_recorder", "strategy")
BOARD_TOML = """\
[wire]
transport = "raw"
iface = "{iface}"
key_file = "/data/foosball/wire.key"

[match_recorder]
directory = "/data/foosball/matches"

[strategy]
"""
CAP_NET_RAW = 1 << 13
START_TIMEOUT_S = 30.0
MARGIN_S = 10.0  # a loaded 2-core CI machine: Python start-up, scheduling
PEER_GAP_S = 0.5  # heartbeats are 10 ms apart; more than this is an outage


@dataclass(frozen=True)
class Board:
    machine: Machine
    heartbeats: Heartbeats
    uid: int

    def unit(self, agent: str) -> str:
        return f"foosball-agent@{agent}.service"

    def main_pid(self, agent: str) -> int:
        return int(self.machine.show(self.unit(agent), "MainPID"))

    def all_active(self) -> bool:
        """Whether every agent's service runs; fails at once when one gave up (start limit)."""
        states = {a: self.machine.systemctl("is-active", self.unit(a)) for a in AGENTS}
        assert "failed" not in states.values(), f"agent services: {states}"
        return set(states.values()) == {"active"}


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("booted-board")
    base = debian_root()
    with veth_link("sd") as link, overlay(base, scratch / "root") as root:
        install_agents(root, BOARD_NAME, BOARD_TOML.format(iface=link.iface_b), AGENTS)
        uid, gid = user_ids(root)
        key = scratch / "data" / "foosball" / "wire.key"
        key.parent.mkdir(parents=True)
        key.write_text(new_key() + "\n")
        for path in (key.parent, key):
            os.chown(path, uid, gid)
        key.chmod(0o600)
        with booted(root, f"foosball-test-{os.getpid()}", link.ns_b,
                    {scratch / "data": "/data"}, scratch / "console.log") as machine, \
             observing(link.exec_in(link.ns_a), "raw", link.iface_a, key) as heartbeats:
            yield Board(machine, heartbeats, uid)


def test_foosball_target_starts_one_service_per_agent_of_the_board(board):
    wait_until(board.all_active, START_TIMEOUT_S, f"{AGENTS} active")
    assert board.machine.systemctl("is-active", "foosball.target") == "active"
    assert board.machine.systemctl("is-enabled", "foosball.target") == "enabled"


def test_agents_run_as_the_foosball_user_with_only_cap_net_raw(board):
    wait_until(board.all_active, START_TIMEOUT_S, f"{AGENTS} active")
    for agent in AGENTS:
        status = dict(line.partition(":\t")[::2] for line in board.machine.run(
            "cat", f"/proc/{board.main_pid(agent)}/status").stdout.splitlines())
        assert status["Uid"].split()[:2] == [str(board.uid)] * 2, agent
        assert int(status["CapEff"], 16) == CAP_NET_RAW, agent


def test_every_agent_heartbeats_on_the_lan(board):
    wait_until(board.all_active, START_TIMEOUT_S, f"{AGENTS} active")
    wait_until(lambda: all(board.heartbeats.latest(a.upper()) for a in AGENTS),
               START_TIMEOUT_S, f"heartbeats of {AGENTS} on the LAN")


def test_a_hung_agent_is_killed_by_the_watchdog_and_restarted_as_a_new_boot(board):
    unit, machine, heartbeats = board.unit("strategy"), board.machine, board.heartbeats
    watchdog_s, restart_s = machine.seconds(unit, "WatchdogUSec"), machine.seconds(
        unit, "RestartUSec")
    wait_until(board.all_active, START_TIMEOUT_S, f"{AGENTS} active")
    old = wait_until(lambda: heartbeats.latest("STRATEGY"), START_TIMEOUT_S, "strategy beats")
    hung_pid, restarts = board.main_pid("strategy"), int(machine.show(unit, "NRestarts"))

    stopped = time.monotonic()
    machine.run("sh", "-c", 'kill -STOP "$1"', "sh", str(hung_pid))
    back = wait_until(lambda: next((b for b in heartbeats.of("STRATEGY", stopped)
                                    if b.boot != old.boot), None),
                      watchdog_s + restart_s + MARGIN_S, "strategy heartbeats with a new boot id")

    last_old = max(b.t for b in heartbeats.of("STRATEGY") if b.boot == old.boot)
    assert last_old < stopped + 0.2, "the stopped agent kept sending"
    assert watchdog_s <= back.t - last_old <= watchdog_s + restart_s + MARGIN_S
    assert heartbeats.longest_gap("MATCH_RECORDER", stopped, back.t) < PEER_GAP_S
    assert int(machine.show(unit, "NRestarts")) == restarts + 1
    assert board.main_pid("strategy") not in (0, hung_pid)
    assert "Watchdog timeout" in machine.journal("--unit", unit, "--output=cat")
