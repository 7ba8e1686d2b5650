from __future__ import annotations

from foosball.agents.strategy import StrategyAgentCore
from foosball.drivetrain import rods_from_motors
from foosball.geometry import default_table
from foosball.runtime import Inputs
from foosball.runtime.latch import SafetyView
from foosball.strategy.seed_rules import SeedRulesStrategy
from foosball.wire.catalogue import (
    AxisStatus,
    BallState,
    BallStatus,
    DriveState,
    GameCommand,
    GameControl,
    GameState,
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


RODS = RodStatus(tuple(RodPosition(RodId(i), 0.01 * i, 0.2, 0.0, 0.0) for i in range(4)))


def feed(c: StrategyAgentCore, t_ns: int, *messages: object,
         faulted: bool = False) -> RodCommand | None:
    """One step of the core with these messages; its command, if any."""
    out = c.step(Inputs(t_ns * 1e-9, messages, safety=SafetyView(faulted=faulted),
                        wall_ns=t_ns))
    assert len(out.messages) <= 1
    return out.messages[0] if out.messages else None


def core() -> StrategyAgentCore:
    return StrategyAgentCore(SeedRulesStrategy(TABLE), TABLE)


def test_playing_emits_one_command_per_ball_state():
    c = core()
    assert feed(c, 0, game(SafetyState.PLAYING), RODS) is None
    command = feed(c, 2_000_000, ball())
    assert isinstance(command, RodCommand)
    assert len(command.rods) == 4
    assert command.ball_capture_time == 1_000_000


def test_paused_holds_the_rods_where_they_are():
    c = core()
    feed(c, 0, game(SafetyState.PAUSED), RODS)
    command = feed(c, 2_000_000, ball())
    assert [t.translation for t in command.rods] == [p.translation for p in RODS.rods]
    assert [t.rotation for t in command.rods] == [0.2] * 4


def test_a_pause_holds_the_rods_from_the_command_itself_before_the_game_state_comes():
    c = core()
    feed(c, 0, game(SafetyState.PLAYING), RODS)
    command = feed(c, 2_000_000, GameControl(command=GameCommand.PAUSE), ball())
    assert all(t.translation_speed == 0 and t.rotation_speed == 0 for t in command.rods)
    feed(c, 3_000_000, game(SafetyState.PLAYING))  # the game panel's word is the last
    command = feed(c, 4_000_000, ball(3_000_000))
    assert any(t.translation_speed > 0 or t.rotation_speed > 0 for t in command.rods)


def test_fault_sends_nothing():
    c = core()
    feed(c, 0, game(SafetyState.FAULT), RODS)
    assert feed(c, 2_000_000, ball()) is None
    assert c.suppressed == 1


def test_a_faulted_drive_silences_the_agent_even_while_playing():
    c = core()
    axes = tuple(AxisStatus(i, DriveState.RUNNING, 0.0, 0.0, 0.0, 0) for i in range(8))
    bad = (*axes[:3], AxisStatus(3, DriveState.QUICK_STOP, 0.0, 0.0, 0.0, 0), *axes[4:])
    feed(c, 0, game(SafetyState.PLAYING), RODS, MotorStatus(axes=bad))
    assert feed(c, 2_000_000, ball()) is None


def test_rod_positions_from_motor_angles():
    axes = tuple(AxisStatus(i, DriveState.RUNNING, 10.0, 0.0, 0.0, 0) for i in range(8))
    status = rods_from_motors(MotorStatus(axes=axes), TABLE)
    keeper = TABLE.robot_rods[0]
    assert status.rods[0].translation == keeper.zero_offset + 10.0 * 0.02 / 5.0
    assert status.rods[0].rotation == 10.0


def test_without_a_game_state_the_agent_stays_in_boot_and_silent():
    c = core()
    assert feed(c, 0, RODS) is None
    assert feed(c, 2_000_000, ball()) is None
    assert c.step(Inputs(0.01)).state == SafetyState.BOOT


def test_a_fault_latched_by_the_runtime_silences_it_even_while_playing():
    c = core()
    feed(c, 0, game(SafetyState.PLAYING), RODS)
    assert feed(c, 2_000_000, ball(), faulted=True) is None
    assert isinstance(feed(c, 3_000_000, ball()), RodCommand)


def test_after_a_backlog_only_the_newest_ball_state_is_acted_on():
    c = core()
    feed(c, 0, game(SafetyState.PLAYING), RODS)
    command = feed(c, 9_000_000, ball(1_000_000), ball(2_000_000), ball(3_000_000))
    assert command is not None and command.ball_capture_time == 3_000_000
    assert c.sent == 1
