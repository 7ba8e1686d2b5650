"""The shared agent runtime, driven turn by turn with a hand-moved clock on an in-process
segment: real codecs, real frames, no threads, no sleeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from foosball.runtime import AgentRuntime, Inputs, Outputs, SenderBudget
from foosball.runtime.latch import Cause
from foosball.runtime.settings import SafetySettings
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    BallState,
    BallStatus,
    GameCommand,
    GameControl,
    Heartbeat,
    RodCommand,
    RodId,
    RodPosition,
    RodStatus,
    RodTarget,
    SafetyState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

KEY = bytes(range(32))
HOLD = RodTarget(rod=RodId.GOALKEEPER, translation=0.0, rotation=0.0, translation_speed=0.0,
                 rotation_speed=0.0)
PEER_DEADLINE = 0.03


class Clock:
    def __init__(self) -> None:
        self.t = 100.0
        self.wall_offset_ns = 1_700_000_000 * 10**9

    def mono(self) -> float:
        return self.t

    def wall(self) -> int:
        return round(self.t * 1e9) + self.wall_offset_ns


@dataclass
class EchoCore:
    """A core that records what it sees and, when told, commands rods or fails."""

    agent: Agent = Agent.STRATEGY
    seen: list[Any] = field(default_factory=list)
    causes: tuple[Cause, ...] = ()
    command: bool = False
    fail: bool = False

    def step(self, inputs: Inputs) -> Outputs:
        if self.fail:
            raise RuntimeError("boom")
        self.seen.extend(inputs.messages)
        out = (RodCommand(ball_capture_time=1, rods=(HOLD,)),) if self.command else ()
        return Outputs(out, self.causes, SafetyState.PLAYING)


class Notifier(SystemdNotifier):
    """systemd's notify protocol, recorded instead of sent."""

    def __init__(self) -> None:
        super().__init__("")
        self.sent: list[str] = []

    def notify(self, state: str) -> None:
        self.sent.append(state)


class Segment:
    """The agent under test and peers on one in-process segment."""

    def __init__(self, core: EchoCore | None = None,
                 peers: tuple[Agent, ...] = (Agent.POLE_DRIVER,), queue_limit: int = 4096,
                 **settings: Any) -> None:
        self.clock = Clock()
        self.hub = MemoryHub(queue_limit)
        self.core = core or EchoCore()
        self.notifier = Notifier()
        self.settings = SafetySettings(deadlines={p: PEER_DEADLINE
                                                  for p in (*peers, self.core.agent)},
                                       startup_grace_s=1.0, **settings)
        self.runtime = AgentRuntime(self.core, self.endpoint(self.core.agent), self.settings,
                                    monotonic=self.clock.mono, wall_ns=self.clock.wall,
                                    notifier=self.notifier, health=None)
        self.peers = {p: self.endpoint(p) for p in (*peers, Agent.GAME_PANEL)}
        self.listener = self.endpoint(Agent.TOOL)
        self.heard: list[Any] = []

    def endpoint(self, agent: Agent) -> Endpoint:
        return Endpoint(MemoryTransport(self.hub), WireCodec(KEY, agent, clock=self.clock.wall))

    def beat(self, peer: Agent, state: SafetyState = SafetyState.READY) -> None:
        self.peers[peer].send(Heartbeat(agent=peer, state=state, period_s=0.01, cpu_load=0.0,
                                        memory=0.0, temperature=-273.0))

    def turn(self, dt: float = 0.005, beating: tuple[Agent, ...] = (Agent.POLE_DRIVER,)) -> None:
        self.clock.t += dt
        for peer in beating:
            self.beat(peer)
        self.runtime.io_turn(0.0)
        self.runtime.work_turn(0.0)
        self.runtime.io_turn(0.0)
        self.heard += [r.message for r in self.listener.receive(0.0)]

    def run(self, seconds: float, **kwargs: Any) -> None:
        for _ in range(round(seconds / 0.005)):
            self.turn(**kwargs)

    def alarms(self, code: AlarmCode | None = None) -> list[Alarm]:
        return [m for m in self.heard if isinstance(m, Alarm) and m.source == self.core.agent
                and (code is None or m.code == code)]

    def restart(self) -> None:
        self.peers[Agent.GAME_PANEL].send(GameControl(command=GameCommand.RESTART))

    def ball_frame(self) -> bytes:
        """A BallState frame from the ball tracker, as its codec writes it."""
        tracker = self.peers.get(Agent.BALL_TRACKER) or self.endpoint(Agent.BALL_TRACKER)
        self.peers[Agent.BALL_TRACKER] = tracker
        return tracker.codec.encode(BallState(
            capture_time=self.clock.wall(), frame=1, x=0.0, y=0.0, vx=0.0, vy=0.0,
            covariance=(1e-6, 1e-6, 1e-3, 1e-3), status=BallStatus.DETECTED))


def test_heartbeats_at_100_hz_say_the_cores_state_and_the_watchdog_is_petted() -> None:
    s = Segment()
    s.run(1.0)
    beats = [m for m in s.heard if isinstance(m, Heartbeat) and m.agent == Agent.STRATEGY]
    assert 99 <= len(beats) <= 101
    assert beats[-1].state == SafetyState.PLAYING
    assert 9 <= s.notifier.sent.count("WATCHDOG=1") <= 11
    assert not s.runtime.latch.faulted


def test_a_silent_peer_is_detected_within_its_deadline_and_latches_fault() -> None:
    s = Segment(EchoCore(command=True))
    s.run(0.5)
    assert any(isinstance(m, RodCommand) for m in s.heard)
    last_beat = s.clock.t
    while not s.alarms(AlarmCode.HEARTBEAT_MISSING):
        s.turn(beating=())
    detected = s.clock.t - last_beat
    assert PEER_DEADLINE < detected <= PEER_DEADLINE + 0.01
    assert s.runtime.state == SafetyState.FAULT
    s.heard.clear()
    s.run(0.2, beating=())
    assert not any(isinstance(m, RodCommand) for m in s.heard), "motion left an agent in FAULT"
    assert s.runtime.counters.interlocked > 0
    assert s.alarms(AlarmCode.HEARTBEAT_MISSING), "a present cause is repeated"


def test_restart_is_refused_on_the_wire_while_a_cause_is_present_and_accepted_after() -> None:
    s = Segment()
    s.run(0.2)
    s.run(0.1, beating=())
    s.restart()
    s.run(0.05, beating=())
    refused = s.alarms(AlarmCode.RESTART_REFUSED)
    assert refused and not refused[0].latched
    assert "no heartbeat from pole_driver" in refused[0].text
    assert not any(isinstance(m, GameControl) for m in s.core.seen), "core saw a refused restart"
    s.run(0.1)  # the peer is back: the cause is gone, the fault stays latched
    assert s.runtime.latch.faulted
    s.restart()
    s.run(0.05)
    assert not s.runtime.latch.faulted
    assert any(isinstance(m, GameControl) for m in s.core.seen)
    assert s.runtime.counters.restarts_refused == 1


def test_a_peers_alarm_latches_and_blocks_restart_while_it_repeats() -> None:
    s = Segment()
    s.run(0.1)
    alarm = Alarm(source=Agent.POLE_DRIVER, code=AlarmCode.LIMIT_BURST, text="bad targets",
                  latched=True, axis=-1)
    for _ in range(5):  # repeated every 0.1 s while present
        s.peers[Agent.POLE_DRIVER].send(alarm)
        s.run(0.1)
        assert s.runtime.latch.faulted
    s.restart()
    s.run(0.01)
    assert "bad targets" in s.alarms(AlarmCode.RESTART_REFUSED)[-1].text
    s.run(0.5)  # the repeats stopped: the cause is gone
    s.restart()
    s.run(0.01)
    assert not s.runtime.latch.faulted


def test_a_peer_in_fault_latches_but_not_in_the_grace_after_a_restart() -> None:
    s = Segment()
    s.run(0.1)
    s.beat(Agent.POLE_DRIVER, SafetyState.FAULT)
    s.run(0.01)
    assert s.runtime.latch.faulted
    s.restart()
    s.run(0.01)
    assert not s.runtime.latch.faulted
    s.beat(Agent.POLE_DRIVER, SafetyState.FAULT)  # it takes the same restart a moment later
    s.run(0.01)
    assert not s.runtime.latch.faulted
    s.run(0.6)
    s.beat(Agent.POLE_DRIVER, SafetyState.FAULT)  # still in FAULT after the grace: news
    s.run(0.01)
    assert s.runtime.latch.faulted


def forged_restart(s: Segment) -> bytes:
    frame = s.endpoint(Agent.GAME_PANEL).codec.encode(GameControl(command=GameCommand.RESTART))
    return frame[:-1] + bytes([frame[-1] ^ 1])  # the MAC no longer verifies


def test_unsigned_frames_never_spend_a_senders_budget() -> None:
    s = Segment(sender_rate_hz=100.0, sender_burst=20)
    s.run(0.1)
    transport = MemoryTransport(s.hub)
    for _ in range(50):  # a trickle (50/s), under the flood limit
        transport.send(forged_restart(s))
        s.run(0.02)
    s.peers[Agent.GAME_PANEL].send(GameControl(command=GameCommand.PAUSE))
    s.run(0.02)
    assert s.runtime.counters.drops["mac"] == 50
    assert s.runtime.budget.refused["game_panel"] == 0
    assert any(isinstance(m, GameControl) for m in s.core.seen), "the real frame got through"
    assert not s.runtime.latch.faulted


def test_a_flood_of_unsigned_frames_is_a_cause_until_it_is_over() -> None:
    s = Segment(flood_limit_hz=1000.0, flood_hold_s=1.0)
    s.run(0.1)
    transport = MemoryTransport(s.hub)

    def flood(seconds: float) -> None:  # 10,000 frames/s, 50 per 5 ms turn
        for _ in range(round(seconds / 0.005)):
            for _ in range(50):
                transport.send(forged_restart(s))
            s.turn()

    flood(0.02)
    alarms = s.alarms(AlarmCode.LAN_FLOOD)
    assert alarms and alarms[0].latched and "fail the MAC" in alarms[0].text
    assert s.runtime.state == SafetyState.FAULT
    s.restart()  # heard through the flood, and refused: the flood is still on
    flood(0.02)
    refused = s.alarms(AlarmCode.RESTART_REFUSED)
    assert refused and "fail the MAC" in refused[-1].text
    s.run(1.1)  # the flood is over
    s.restart()
    s.run(0.02)
    assert not s.runtime.latch.faulted
    assert s.runtime.counters.drops["mac"] == 50 * 8


def test_frames_dropped_unread_count_toward_a_flood() -> None:
    # A flood past what the agent's CPU reads: most frames never reach the codec (the
    # kernel drops them from the full queue), and what it does read may sit under the limit.
    s = Segment(queue_limit=300, flood_limit_hz=1000.0, flood_hold_s=1.0)
    s.run(0.1)
    assert s.runtime.counters.drops["overflow"] == 0, "a healthy LAN overflows nothing"
    for _ in range(1000):  # frames signed by a peer: not one fails the MAC
        s.beat(Agent.POLE_DRIVER)
    s.run(0.01)
    assert s.runtime.counters.drops["overflow"] == 1000 + 1 - 300
    assert s.runtime.counters.drops["mac"] == 0
    alarms = s.alarms(AlarmCode.LAN_FLOOD)
    assert alarms and alarms[0].latched and "overflow this agent" in alarms[0].text
    s.run(1.1)  # over: a cause no more
    s.restart()
    s.run(0.02)
    assert not s.runtime.latch.faulted


def test_an_agent_that_was_away_past_its_deadline_latches_itself() -> None:
    # SIGSTOP and SIGCONT, or the CPU taken away: its peers have counted it lost meanwhile,
    # and what it believed before (PLAYING) must not go out as if nothing happened.
    s = Segment()
    s.run(0.1)
    s.runtime._notice_absence(s.clock.t, 0.005)
    s.runtime._notice_absence(s.clock.t + 0.01, 0.005)  # an ordinary turn: not away
    s.run(0.01)
    assert not s.runtime.latch.faulted
    last = s.clock.t
    s.runtime._notice_absence(last, 0.005)
    s.clock.t += 0.2
    s.runtime._notice_absence(s.clock.t, 0.005)  # 195 ms past its last turn's wait
    s.run(0.01)
    away = s.alarms(AlarmCode.INTERNAL_ERROR)
    assert away and "was away for" in away[0].text and s.runtime.state == SafetyState.FAULT
    s.run(1.1)  # a cause for a second, then gone: a RESTART brings it back
    s.restart()
    s.run(0.02)
    assert not s.runtime.latch.faulted


def test_one_flooding_sender_spends_only_its_own_budget() -> None:
    budget = SenderBudget(rate_hz=100.0, burst=10)
    assert sum(budget.spend(Agent.BALL_TRACKER, 0.0) for _ in range(1000)) == 10
    assert budget.spend(Agent.GAME_PANEL, 0.0)
    assert budget.refused["ball_tracker"] == 990
    assert budget.spend(Agent.BALL_TRACKER, 0.05)  # refilled with time


def test_a_wall_clock_step_is_a_cause_for_a_while() -> None:
    s = Segment()
    s.run(0.1)
    s.clock.wall_offset_ns += 10**9  # PTP stepped this board's clock by 1 s
    s.run(0.01)
    alarms = s.alarms(AlarmCode.CLOCK_STEP)
    assert alarms and "+1.000 s" in alarms[0].text
    s.run(2.1)
    s.restart()
    s.run(0.01)
    assert not s.runtime.latch.faulted


def test_a_failing_step_is_an_internal_error_and_the_agent_keeps_running() -> None:
    s = Segment()
    s.run(0.1)
    s.core.fail = True
    s.run(0.05)
    assert s.alarms(AlarmCode.INTERNAL_ERROR)
    assert s.runtime.counters.step_errors >= 5
    s.core.fail = False
    s.run(1.1)
    s.restart()
    s.run(0.01)
    assert not s.runtime.latch.faulted


def test_a_stalled_step_loop_stops_heartbeats_and_the_watchdog() -> None:
    s = Segment(stall_s=0.25)
    s.run(0.1)
    s.notifier.sent.clear()
    s.heard.clear()
    for _ in range(100):  # the I/O half alone: the step loop hangs
        s.clock.t += 0.005
        s.beat(Agent.POLE_DRIVER)
        s.runtime.io_turn(0.0)
    s.heard += [r.message for r in s.listener.receive(0.0)]
    beats = [m for m in s.heard if isinstance(m, Heartbeat) and m.agent == Agent.STRATEGY]
    assert len(beats) <= round(s.settings.stall_s / 0.01) + 1
    assert s.notifier.sent.count("WATCHDOG=1") <= 3
    assert s.alarms(AlarmCode.INTERNAL_ERROR), "the I/O half says why"


def test_a_message_the_catalogue_refuses_is_an_internal_error_not_a_crash() -> None:
    s = Segment()
    s.run(0.1)
    s.runtime._send(RodCommand(ball_capture_time=1, rods=()))  # no rods: refused
    s.run(0.01)
    assert s.alarms(AlarmCode.INTERNAL_ERROR)
    assert s.runtime.counters.drops["send:invalid"] == 1


def test_own_cause_from_the_core_is_announced_and_latches() -> None:
    s = Segment()
    s.run(0.1)
    s.core.causes = (Cause(AlarmCode.CAMERA_LOST, "no camera frame for 120 ms"),)
    s.run(0.25)
    alarms = s.alarms(AlarmCode.CAMERA_LOST)
    assert 2 <= len(alarms) <= 4  # new, then every 0.1 s
    assert s.runtime.view.causes == ("no camera frame for 120 ms",)
    assert any(m.startswith("STATUS=FAULT; no camera frame") for m in s.notifier.sent)


def test_a_game_control_the_core_sends_applies_to_its_own_agent_too() -> None:
    """The game panel's RESTART restarts the panel itself, by the same rule as the peers."""

    @dataclass
    class PanelCore(EchoCore):
        restart_now: bool = False

        def step(self, inputs: Inputs) -> Outputs:
            out = super().step(inputs)
            if self.restart_now:
                self.restart_now = False
                return Outputs((GameControl(command=GameCommand.RESTART),), self.causes,
                               out.state)
            return out

    s = Segment(PanelCore(agent=Agent.GAME_PANEL))
    s.run(0.1)
    s.run(0.1, beating=())
    assert s.runtime.latch.faulted
    s.core.restart_now = True  # type: ignore[attr-defined]
    s.run(0.02, beating=())
    assert s.alarms(AlarmCode.RESTART_REFUSED), "refused while the peer is silent"
    s.run(0.05)
    s.core.restart_now = True  # type: ignore[attr-defined]
    s.run(0.02)
    assert not s.runtime.latch.faulted
    assert any(isinstance(m, GameControl) for m in s.core.seen)


@dataclass
class ReadingCore(EchoCore):
    """An EchoCore that says which messages its step reads."""

    reads: tuple[type, ...] = (BallState,)


def test_a_core_hears_only_what_it_reads_and_the_others_are_never_authenticated() -> None:
    s = Segment(ReadingCore())
    s.run(0.05)
    s.peers[Agent.POLE_DRIVER].send(RodStatus(rods=(RodPosition(
        rod=RodId.GOALKEEPER, translation=0.0, rotation=0.0, translation_velocity=0.0,
        rotation_velocity=0.0),)))
    forged = bytearray(s.ball_frame())
    forged[-1] ^= 1  # a tag that does not verify, on a message the core reads
    MemoryTransport(s.hub).send(bytes(forged))
    MemoryTransport(s.hub).send(s.ball_frame())
    s.restart()
    s.run(0.02)
    seen = {type(m) for m in s.core.seen}
    assert BallState in seen and GameControl in seen  # its own, and the runtime's
    assert RodStatus not in seen
    codec = s.runtime.endpoint.codec
    # The RodStatus was left out on arrival (the transport's set_aside, as the raw socket's
    # filter does in the kernel): it never reached the codec, checked or set aside.
    assert s.runtime.endpoint.transport._set_aside == codec.set_aside
    assert RodStatus.TYPE_ID in codec.set_aside.types
    assert Heartbeat.TYPE_ID not in codec.set_aside.types
    # It watches the pole driver: any other agent's heartbeat would tell it nothing.
    assert codec.set_aside.heartbeat_senders == {int(a) for a in Agent} - {Agent.POLE_DRIVER}
    assert codec.not_read == 0
    assert s.runtime.counters.drops["mac"] == 1  # what it reads is checked as ever
    assert not s.runtime.monitor.missing(s.clock.t)  # heartbeats still count


def test_every_catalogue_message_is_read_by_an_agent_of_the_rig() -> None:
    """A frame an agent does not read is set aside unauthenticated, so a forged flood of
    some type is seen only by the agents that read it: every type needs a reader (the
    update agent runs on every board)."""
    from foosball.agents.ball_tracker import BallTrackerCore
    from foosball.agents.game_panel import GamePanelCore
    from foosball.agents.motor_driver import MotorDriverCore
    from foosball.agents.pole_driver import PoleDriverCore
    from foosball.agents.strategy import StrategyAgentCore
    from foosball.agents.supervisory_panel import SupervisoryCore
    from foosball.ota.core import UpdateCore
    from foosball.runtime import RUNTIME_READS
    from foosball.wire.catalogue import MESSAGE_TYPES

    cores = (BallTrackerCore, GamePanelCore, MotorDriverCore, PoleDriverCore,
             StrategyAgentCore, SupervisoryCore, UpdateCore)
    read = set(RUNTIME_READS).union(*(core.reads for core in cores))
    assert [cls.__name__ for cls in MESSAGE_TYPES if cls not in read] == []


def test_an_agent_watching_only_its_board_mate_stops_on_its_alarm_a_turn_later() -> None:
    """[safety.watches]: the pole board's motor driver watches its board mates only. It never
    authenticates another agent's heartbeat (left out on arrival, as the raw socket's filter
    does in the kernel), and a remote agent's loss reaches it as the watcher's alarm, in the
    turn the alarm is sent; a restart is refused while that cause is present."""
    clock, hub = Clock(), MemoryHub()
    mates = (Agent.MOTOR_DRIVER, Agent.POLE_DRIVER)
    settings = SafetySettings(deadlines={a: PEER_DEADLINE for a in (*mates, Agent.BALL_TRACKER)},
                              watches={Agent.MOTOR_DRIVER: (Agent.POLE_DRIVER,)},
                              startup_grace_s=1.0)

    def endpoint(agent: Agent) -> Endpoint:
        return Endpoint(MemoryTransport(hub), WireCodec(KEY, agent, clock=clock.wall))

    motor, pole = (AgentRuntime(EchoCore(agent), endpoint(agent), settings,
                                monotonic=clock.mono, wall_ns=clock.wall, health=None)
                   for agent in mates)
    tracker, panel = endpoint(Agent.BALL_TRACKER), endpoint(Agent.GAME_PANEL)
    assert set(motor.monitor.deadlines_s) == {Agent.POLE_DRIVER}
    assert set(pole.monitor.deadlines_s) == {Agent.MOTOR_DRIVER, Agent.BALL_TRACKER}

    def turn(tracker_alive: bool) -> None:
        clock.t += 0.005
        if tracker_alive:
            tracker.send(Heartbeat(agent=Agent.BALL_TRACKER, state=SafetyState.READY,
                                   period_s=0.01, cpu_load=0.0, memory=0.0, temperature=-273.0))
        for runtime in (pole, motor):
            runtime.io_turn(0.0)
            runtime.work_turn(0.0)
            runtime.io_turn(0.0)

    for _ in range(100):
        turn(tracker_alive=True)
    assert not motor.latch.faulted and not pole.latch.faulted
    # Every frame the motor driver's codec saw was the pole driver's heartbeat, checked.
    assert motor.endpoint.codec.accepted == pole.counters.heartbeats_sent > 0
    assert motor.endpoint.codec.not_read == 0  # the tracker's never reached the codec
    last_beat = clock.t
    while not pole.latch.faulted:
        turn(tracker_alive=False)
    assert clock.t - last_beat <= PEER_DEADLINE + 0.01
    assert motor.latch.faulted, "the motor driver did not stop in the turn of the alarm"
    assert "alarm from pole_driver" in motor.latch.fault_text
    for _ in range(20):
        turn(tracker_alive=False)
    panel.send(GameControl(command=GameCommand.RESTART))
    for _ in range(20):
        turn(tracker_alive=False)
    assert motor.latch.faulted and motor.latch.refused > 0
