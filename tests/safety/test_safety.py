import socket

import pytest

from foosball.runtime.heartbeat import HeartbeatMonitor
from foosball.safety.health import read_board_health
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import Agent, AlarmCode, Heartbeat, SafetyState


def beat(agent: Agent) -> Heartbeat:
    return Heartbeat(agent=agent, state=SafetyState.PLAYING, period_s=0.01, cpu_load=1.0,
                     memory=1.0, temperature=40.0)


def test_a_silent_peer_is_missing_for_as_long_as_it_stays_silent():
    t = 10.0
    monitor = HeartbeatMonitor({Agent.STRATEGY: 0.05, Agent.BALL_TRACKER: 0.045}, start_s=t)
    monitor.observe(beat(Agent.STRATEGY), t)
    monitor.observe(beat(Agent.BALL_TRACKER), t)
    monitor.observe(beat(Agent.BALL_TRACKER), t + 0.02)
    assert monitor.missing(t + 0.04) == []
    [cause] = monitor.missing(t + 0.06)
    assert cause.code == AlarmCode.HEARTBEAT_MISSING and cause.subject == "STRATEGY"
    assert cause.text == "no heartbeat from strategy for 60 ms (deadline 50 ms)"
    assert {c.subject for c in monitor.missing(t + 0.2)} == {"STRATEGY", "BALL_TRACKER"}
    monitor.observe(beat(Agent.STRATEGY), t + 0.2)
    assert [c.subject for c in monitor.missing(t + 0.2)] == ["BALL_TRACKER"]
    assert monitor.longest_gap_s[Agent.STRATEGY] == pytest.approx(0.2)


def test_a_peer_that_never_started_is_missing_after_the_grace():
    monitor = HeartbeatMonitor({Agent.MOTOR_DRIVER: 0.03}, start_s=0.0, startup_grace_s=5.0)
    assert monitor.missing(4.9) == []
    [cause] = monitor.missing(5.1)
    assert "since start" in cause.text


def test_missing_looks_again_exactly_when_the_earliest_deadline_passes():
    """`missing` skips its look while no deadline can have passed (asked at every safety
    tick): it must still say a peer is missing at the first tick past its deadline, after
    any mix of heartbeats and looks, as a look every time would."""
    import random

    rng = random.Random(7)
    peers = {Agent.STRATEGY: 0.03, Agent.BALL_TRACKER: 0.03, Agent.GAME_PANEL: 0.05}
    monitor = HeartbeatMonitor(dict(peers), start_s=0.0, startup_grace_s=0.2)
    now, said = 0.0, set()
    for _ in range(20_000):
        now += rng.choice((0.0, 0.0005, 0.001, 0.004))
        if rng.random() < 0.3:
            monitor.observe(beat(rng.choice(list(peers))), now)
        expected = {agent.name for agent, deadline in peers.items()
                    if (now - monitor.last_seen_s[agent] > deadline
                        if agent in monitor.last_seen_s else now > 0.2)}
        got = {cause.subject for cause in monitor.missing(now)}
        assert got == expected, now
        said |= got
    assert said == {agent.name for agent in peers}  # each was missing at some time


def test_board_health_is_within_the_catalogue_ranges():
    health = read_board_health()
    beat_with_health = Heartbeat(agent=Agent.TOOL, state=SafetyState.BOOT, period_s=0.01,
                                 cpu_load=health.cpu_load, memory=health.memory,
                                 temperature=health.temperature)
    from foosball.wire.catalogue import to_body

    to_body(beat_with_health)  # raises if out of range


def test_systemd_notifier_speaks_the_notify_protocol(tmp_path):
    path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    notifier = SystemdNotifier(path)
    notifier.ready()
    notifier.watchdog()
    assert server.recv(64) == b"READY=1"
    assert server.recv(64) == b"WATCHDOG=1"
    assert not SystemdNotifier("").enabled


def test_heartbeat_schedule_beats_every_period_and_reads_health_once_a_second():
    from foosball.runtime.heartbeat import HeartbeatSchedule
    from foosball.safety.health import Health

    reads = []

    def health() -> Health:
        reads.append(1)
        return Health(10.0, 20.0, 45.0)

    schedule = HeartbeatSchedule(Agent.POLE_DRIVER, period_s=0.01, health=health)
    beats = [schedule.due(k * 0.005, SafetyState.READY) for k in range(400)]  # 2 s of turns
    sent = [b for b in beats if b is not None]
    assert len(sent) == 200
    assert len(reads) == 2
    assert sent[0].temperature == 45.0 and sent[0].agent == Agent.POLE_DRIVER
