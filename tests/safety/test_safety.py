import socket

from foosball.safety.health import read_board_health
from foosball.safety.heartbeat import HeartbeatMonitor
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import Agent, AlarmCode, Heartbeat, SafetyState


def beat(agent: Agent) -> Heartbeat:
    return Heartbeat(agent=agent, state=SafetyState.PLAYING, period_s=0.01, cpu_load=1.0,
                     memory=1.0, temperature=40.0)


def test_a_silent_peer_raises_one_latched_alarm_per_episode(clock):
    monitor = HeartbeatMonitor(Agent.MOTOR_DRIVER, (Agent.STRATEGY, Agent.BALL_TRACKER),
                               start_ns=clock.now, deadline_s=0.05)
    monitor.observe(beat(Agent.STRATEGY), clock.now)
    monitor.observe(beat(Agent.BALL_TRACKER), clock.now)
    clock.advance(0.04)
    monitor.observe(beat(Agent.BALL_TRACKER), clock.now)
    assert monitor.check(clock.now) == []
    clock.advance(0.02)
    alarms = monitor.check(clock.now)
    assert [a.code for a in alarms] == [AlarmCode.HEARTBEAT_MISSING]
    assert "strategy" in alarms[0].text and alarms[0].latched
    clock.advance(0.1)
    assert [a.text for a in monitor.check(clock.now)] == [
        "no heartbeat from ball_tracker for 120 ms"]
    assert monitor.check(clock.now) == []  # once per episode
    monitor.observe(beat(Agent.STRATEGY), clock.now)
    assert Agent.STRATEGY not in monitor.missing


def test_a_peer_that_never_started_is_missing_after_the_grace(clock):
    monitor = HeartbeatMonitor(Agent.GAME_PANEL, (Agent.MOTOR_DRIVER,), start_ns=clock.now,
                               startup_grace_s=5.0)
    clock.advance(4.9)
    assert monitor.check(clock.now) == [] and not monitor.all_alive
    clock.advance(0.2)
    assert len(monitor.check(clock.now)) == 1


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
    from foosball.safety.health import Health
    from foosball.safety.heartbeat import HeartbeatSchedule

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
