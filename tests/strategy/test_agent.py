from __future__ import annotations

from foosball.agents.strategy import StrategyAgentCore, rods_from_motors
from foosball.geometry import default_table
from foosball.strategy.seed_rules import SeedRulesStrategy
from foosball.wire.catalogue import (
    Agent,
    AxisStatus,
    BallState,
    BallStatus,
    DriveState,
    GameState,
    Heartbeat,
    MotorStatus,
    RodCommand,
    RodId,
    RodPosition,
    RodStatus,
    SafetyState,
)

TABLE = default_table()


def ball(t_ns: int = 1_000_000) -> BallState:
    return BallState(capture_time=t_ns, frame=1, x=-0.2, y=0.05, vx=-1.0, vy=0.0,
                     covariance=(0.0, 0.0, 0.0, 0.0), status=BallStatus.DETECTED)


def game(state: SafetyState) -> GameState:
    return GameState(state=state, score_robot=0, score_human=0, clock_s=0.0, alarm_text="")


RODS = RodStatus(rods=tuple(RodPosition(RodId(i), 0.01 * i, 0.2, 0.0, 0.0) for i in range(4)))


def core() -> StrategyAgentCore:
    return StrategyAgentCore(SeedRulesStrategy(TABLE), TABLE)


def test_playing_emits_one_command_per_ball_state():
    c = core()
    assert c.step(0, game=game(SafetyState.PLAYING), rods=RODS) is None
    command = c.step(2_000_000, ball=ball())
    assert isinstance(command, RodCommand)
    assert len(command.rods) == 4
    assert command.ball_capture_time == 1_000_000


def test_paused_holds_the_rods_where_they_are():
    c = core()
    c.step(0, game=game(SafetyState.PAUSED), rods=RODS)
    command = c.step(2_000_000, ball=ball())
    assert [t.translation for t in command.rods] == [p.translation for p in RODS.rods]
    assert [t.rotation for t in command.rods] == [0.2] * 4


def test_fault_sends_nothing():
    c = core()
    c.step(0, game=game(SafetyState.FAULT), rods=RODS)
    assert c.step(2_000_000, ball=ball()) is None
    assert c.suppressed == 1


def test_a_faulted_drive_silences_the_agent_even_while_playing():
    c = core()
    axes = tuple(AxisStatus(i, DriveState.RUNNING, 0.0, 0.0, 0.0, 0) for i in range(8))
    bad = (*axes[:3], AxisStatus(3, DriveState.QUICK_STOP, 0.0, 0.0, 0.0, 0), *axes[4:])
    c.step(0, game=game(SafetyState.PLAYING), rods=RODS, motors=MotorStatus(axes=bad))
    assert c.step(2_000_000, ball=ball()) is None


def test_rod_positions_from_motor_angles():
    axes = tuple(AxisStatus(i, DriveState.RUNNING, 10.0, 0.0, 0.0, 0) for i in range(8))
    status = rods_from_motors(MotorStatus(axes=axes), TABLE)
    keeper = TABLE.robot_rods[0]
    assert status.rods[0].translation == keeper.zero_offset + 10.0 * 0.02 / 5.0
    assert status.rods[0].rotation == 10.0


def test_run_loop_feeds_the_core_and_sends_its_commands():
    from foosball.agents.strategy import make_core, run

    class Received:
        def __init__(self, message):
            self.message = message

    class FakeEndpoint:
        def __init__(self, batches):
            self.batches = list(batches)
            self.sent = []

        def receive(self, timeout=0.0):
            return [Received(m) for m in self.batches.pop(0)] if self.batches else []

        def send(self, message):
            self.sent.append(message)

    endpoint = FakeEndpoint([[game(SafetyState.PLAYING), RODS], [ball()], [ball(2_000_000)]])
    core = make_core("seed-rules", TABLE)
    ticks = iter(range(0, 10**9, 4_000_000))  # the clock advances 4 ms per reading
    run(endpoint, core, clock=lambda: next(ticks), should_stop=lambda: not endpoint.batches,
        health=None)
    commands = [m for m in endpoint.sent if isinstance(m, RodCommand)]
    beats = [m for m in endpoint.sent if isinstance(m, Heartbeat)]
    assert len(commands) == 2
    assert beats and beats[0].agent == Agent.STRATEGY
    assert beats[-1].state == SafetyState.PLAYING
