"""The update agent's pure core, stepped by hand: messages and a RaucView in, requests and
OtaStatus out, the clock passed in."""

from __future__ import annotations

from dataclasses import replace

import pytest

from foosball.ota.core import (
    Download,
    Pending,
    RaucView,
    Request,
    UpdateAgentConfig,
    UpdateCore,
    UpdatePhase,
)
from foosball.runtime import Inputs
from foosball.wire.catalogue import (
    Agent,
    AxisStatus,
    DriveState,
    GameState,
    Heartbeat,
    MotorStatus,
    OtaCommand,
    OtaStatus,
    SafetyState,
)

CONFIG = UpdateAgentConfig(board="pole", watch=("pole_driver", "motor_driver"),
                           health_deadline_s=60.0, healthy_for_s=5.0)
ON_A = RaucView(reachable=True, booted="rootfs.0", primary="rootfs.0",
                versions={"rootfs.0": "", "rootfs.1": ""}, running_version="1.0")
INSTALL = OtaCommand(board="pole", action="install", url="http://10.77.0.1:8000/x/pole.raucb")
BUNDLE = "/data/foosball/ota/bundle.raucb"  # where the hardware downloads it to
DOWNLOADED = Download(INSTALL.url, 1, BUNDLE, received=4096, total=4096, done=True)


def beat(agent: Agent, state: SafetyState = SafetyState.FAULT) -> Heartbeat:
    return Heartbeat(agent=agent, state=state, period_s=0.01, cpu_load=1.0, memory=1.0,
                     temperature=40.0)


BOARD_BEATS = (beat(Agent.POLE_DRIVER), beat(Agent.MOTOR_DRIVER))


class SteppedAgent:
    """The core with its clock and the latest RAUC view, stepped by hand."""

    def __init__(self, rauc: RaucView = ON_A, config: UpdateAgentConfig = CONFIG) -> None:
        self.core = UpdateCore(config, 0.0)
        self.now = 0.0
        self.rauc = rauc
        self.requests: list[Request] = []
        self.statuses: list[OtaStatus] = []

    def step(self, *messages: object, dt: float = 0.1) -> None:
        self.now += dt
        out = self.core.step(Inputs(self.now, tuple(messages), self.rauc))
        self.requests += out.actuation
        self.statuses += [m for m in out.messages if isinstance(m, OtaStatus)]

    def run(self, seconds: float, *messages: object) -> None:
        for _ in range(round(seconds / 0.1)):
            self.step(*messages)

    def kinds(self) -> list[str]:
        return [f"{r.kind} {r.argument}".strip() for r in self.requests]

    @property
    def last(self) -> OtaStatus:
        return self.statuses[-1]


def downloaded(agent: SteppedAgent) -> None:
    """The install command, then the hardware's download of its bundle, done: RAUC is
    asked to install the local copy."""
    agent.step(INSTALL)
    assert agent.kinds()[-1] == f"download {INSTALL.url}"
    previous = agent.rauc.download.serial if agent.rauc.download else 0
    agent.rauc = replace(agent.rauc, download=replace(DOWNLOADED, serial=previous + 1))
    agent.step()
    assert agent.kinds()[-1] == f"install {BUNDLE}"


def healthy(agent: SteppedAgent) -> SteppedAgent:
    agent.run(6.0, *BOARD_BEATS)
    assert agent.core.phase == UpdatePhase.IDLE, agent.core.text
    agent.requests.clear()
    return agent


def test_a_boot_is_marked_good_once_the_boards_agents_are_heard_steadily() -> None:
    agent = SteppedAgent()
    agent.run(4.0, *BOARD_BEATS)
    assert agent.core.phase == UpdatePhase.CHECKING and agent.requests == []
    agent.run(1.5, *BOARD_BEATS)
    assert agent.kinds() == ["mark good"]
    assert (agent.last.state, agent.last.slot, agent.last.version) == ("idle", "rootfs.0", "1.0")


def test_an_agent_restarting_starts_the_count_again() -> None:
    agent = SteppedAgent()
    agent.run(4.0, *BOARD_BEATS)
    agent.run(1.0, beat(Agent.MOTOR_DRIVER))  # pole_driver silent 1 s: systemd restarts it
    agent.run(4.0, *BOARD_BEATS)
    assert agent.requests == []
    assert "pole_driver up 4 s" in agent.core.text
    agent.run(1.5, *BOARD_BEATS)
    assert agent.kinds() == ["mark good"]


@pytest.mark.parametrize(("message", "reason"), [
    (GameState(state=SafetyState.PLAYING, score_robot=0, score_human=0, clock_s=1.0,
               alarm_text=""), "a game is running (PLAYING)"),
    (MotorStatus(axes=(AxisStatus(axis=0, state=DriveState.RUNNING, position=0.0,
                                  velocity=1.0, current=0.1, fault_code=0),
                       AxisStatus(axis=1, state=DriveState.QUICK_STOP, position=0.0,
                                  velocity=0.0, current=0.0, fault_code=0))),
     "motors enabled: 1 of 2 drives RUNNING; halt them first"),
])
def test_an_install_is_refused_while_unsafe_with_the_reason(message: object,
                                                            reason: str) -> None:
    agent = healthy(SteppedAgent())
    agent.step(message)
    agent.step(INSTALL, *BOARD_BEATS)
    assert agent.requests == []
    assert (agent.last.state, agent.last.text) == ("refused", reason)
    agent.step(*BOARD_BEATS)
    assert agent.last.state == "idle"  # a refusal is said once


def test_what_peers_said_more_than_a_second_ago_does_not_block() -> None:
    agent = healthy(SteppedAgent())
    agent.step(GameState(state=SafetyState.PLAYING, score_robot=0, score_human=0, clock_s=1.0,
                         alarm_text=""))
    agent.run(1.2, *BOARD_BEATS)  # the game panel went quiet
    agent.step(INSTALL)
    assert agent.kinds() == [f"download {INSTALL.url}"]


def test_commands_for_another_board_and_unknown_actions() -> None:
    agent = healthy(SteppedAgent())
    agent.step(replace(INSTALL, board="vision"))
    assert agent.requests == []
    agent.step(replace(INSTALL, action="format"))
    assert agent.last.state == "refused" and "unknown action 'format'" in agent.last.text
    agent.step(replace(INSTALL, url="file:../../etc/shadow"))
    assert agent.last.state == "refused" and "not an http(s) URL" in agent.last.text


def test_install_then_reboot_at_a_safe_moment_with_the_pending_update_recorded() -> None:
    agent = healthy(SteppedAgent())
    downloaded(agent)
    agent.rauc = replace(ON_A, operation="installing", progress=40, progress_text="Copying")
    agent.step()
    assert (agent.last.state, agent.last.progress, agent.last.url) == ("installing", 40.0,
                                                                       INSTALL.url)
    agent.step(replace(INSTALL, url="http://10.77.0.2/other.raucb"))
    assert agent.last.state == "refused" and agent.last.text.startswith("busy: installing")
    assert agent.last.url == "http://10.77.0.2/other.raucb"  # the refusal names what it refused
    game = GameState(state=SafetyState.PLAYING, score_robot=0, score_human=0, clock_s=1.0,
                     alarm_text="")
    agent.rauc = replace(ON_A, completed=1, primary="rootfs.1",
                         versions={"rootfs.0": "", "rootfs.1": "2.0"})
    agent.step(game)  # a game started during the install: the reboot waits
    agent.run(0.5, game)
    assert agent.core.phase == UpdatePhase.INSTALLED and "reboot waits" in agent.core.text
    assert agent.kinds() == [f"download {INSTALL.url}", f"install {BUNDLE}",
                             "discard_download"]
    agent.run(2.0)  # the game is over (its panel stopped saying PLAYING)
    assert agent.core.phase == UpdatePhase.REBOOTING
    assert agent.kinds()[3:] == ["save_pending", "reboot"]
    assert agent.requests[3].pending == Pending("rootfs.1", "2.0", "rootfs.0", "1.0")


def test_a_failed_install_says_rauc_s_error_and_stays() -> None:
    agent = healthy(SteppedAgent())
    downloaded(agent)
    agent.rauc = replace(ON_A, completed=1, last_result=1,
                         last_error="Installation error: signature verification failed")
    agent.step()
    assert agent.last.state == "failed"
    assert agent.last.text.startswith("Installation error: signature verification failed")
    assert agent.kinds()[1:] == [f"install {BUNDLE}", "discard_download"]
    agent.step(INSTALL)  # a failed install does not block the next
    assert agent.kinds()[-1] == f"download {INSTALL.url}"


PENDING = Pending("rootfs.1", "2.0", "rootfs.0", "1.0")
ON_B = RaucView(reachable=True, booted="rootfs.1", primary="rootfs.1", running_version="2.0",
                versions={"rootfs.0": "", "rootfs.1": "2.0"}, pending=PENDING)


def test_a_new_slot_found_healthy_is_marked_good_and_reported_updated() -> None:
    agent = SteppedAgent(ON_B)
    agent.run(6.0, *BOARD_BEATS)
    assert agent.kinds() == ["mark good", "clear_pending"]
    assert (agent.last.state, agent.last.slot, agent.last.version) == ("updated", "rootfs.1",
                                                                       "2.0")


def test_a_new_slot_not_healthy_by_the_deadline_is_marked_bad_and_rebooted() -> None:
    agent = SteppedAgent(ON_B)
    agent.run(61.0, beat(Agent.MOTOR_DRIVER))  # the pole driver never comes up
    assert agent.kinds() == ["mark bad", "reboot"]
    assert agent.last.state == "rolling_back"
    assert "pole_driver never heard" in agent.last.text


def test_back_on_the_old_slot_after_a_failed_update_it_says_rolled_back() -> None:
    agent = SteppedAgent(replace(ON_A, pending=PENDING))
    agent.run(6.0, *BOARD_BEATS)
    assert agent.kinds() == ["mark good", "clear_pending"]
    assert agent.last.state == "rolled_back"
    assert agent.last.text == "2.0 on rootfs.1 did not become healthy; back on rootfs.0 (1.0)"


def test_an_old_slot_that_is_not_healthy_is_left_to_the_boot_counter() -> None:
    agent = SteppedAgent()
    agent.run(61.0)
    assert agent.requests == [] and agent.last.state == "unhealthy"
    agent.run(6.0, *BOARD_BEATS)  # it recovers: then it is marked good
    assert agent.kinds() == ["mark good"]


def test_without_rauc_nothing_is_decided_and_the_status_says_why() -> None:
    agent = SteppedAgent(RaucView(reachable=False, call_error="no D-Bus: connection refused"))
    agent.run(6.0, *BOARD_BEATS)
    agent.step(INSTALL)
    assert agent.requests == []
    assert agent.last.text.startswith("RAUC is not reachable on D-Bus")


def test_the_config_refuses_what_cannot_work() -> None:
    with pytest.raises(ValueError, match="no agent 'pole_drive'"):
        UpdateAgentConfig(board="pole", watch=("pole_drive",))
    with pytest.raises(ValueError, match="healthy_for_s must be below"):
        UpdateAgentConfig(board="pole", health_deadline_s=5.0, healthy_for_s=5.0)


# -- every phase has a deadline; RAUC restarting ends an install (issue 28) -----------------

FAST = replace(CONFIG, download_stall_s=5.0, download_deadline_s=20.0, check_deadline_s=10.0,
               install_deadline_s=30.0, reboot_deadline_s=15.0)


def test_a_download_that_fails_or_takes_too_long_ends_in_failed_and_is_discarded() -> None:
    agent = healthy(SteppedAgent(config=FAST))
    agent.step(INSTALL)
    stalled = Download(INSTALL.url, 1, BUNDLE, received=65536, total=1 << 20,
                       error="no data for 5 s from the server (stalled at 65536 of 1048576 "
                             "bytes)")
    agent.rauc = replace(ON_A, download=stalled)
    agent.step()
    assert agent.last.state == "failed" and "no data for 5 s" in agent.last.text
    assert agent.last.url == INSTALL.url
    assert agent.kinds()[-1] == "discard_download"

    agent.step(INSTALL)  # a server that trickles: the whole download's deadline
    agent.step()  # the last download's error is not this one's
    assert agent.core.phase == UpdatePhase.DOWNLOADING
    agent.rauc = replace(ON_A, download=Download(INSTALL.url, 2, BUNDLE, received=1 << 20,
                                                 total=8 << 20))
    agent.run(19.0)
    assert agent.core.phase == UpdatePhase.DOWNLOADING and agent.last.progress == 12.0
    assert agent.last.text == "1024 KiB of 8192 KiB"
    agent.run(1.5)
    assert agent.last.state == "failed"
    assert agent.last.text.startswith("download not done within 20 s (1024 KiB of 8192 KiB)")
    assert agent.kinds()[-1] == "discard_download"


def test_rauc_restarting_mid_install_fails_it_at_once_and_the_next_install_is_taken() -> None:
    agent = healthy(SteppedAgent(replace(ON_A, owner=":1.4"), config=FAST))
    downloaded(agent)
    agent.rauc = replace(agent.rauc, operation="installing", progress=20,
                         progress_text="Checking bundle")
    agent.step()
    agent.rauc = RaucView(reachable=False, call_error="RAUC is not on the bus")  # killed
    agent.run(2.0)
    assert agent.core.phase == UpdatePhase.INSTALLING  # a bus hiccup is not yet a failure
    agent.rauc = replace(ON_A, owner=":1.9")  # systemd (or a person) started it again
    agent.step()
    assert agent.last.state == "failed"
    assert agent.last.text.startswith("RAUC restarted during the install (:1.4 is now :1.9)")
    assert agent.kinds()[-1] == "discard_download"
    downloaded(agent)  # taken again


def test_rauc_silent_or_stuck_ends_the_install_at_its_step_s_deadline() -> None:
    agent = healthy(SteppedAgent(config=FAST))
    downloaded(agent)
    agent.rauc = RaucView(reachable=False)  # gone for good
    agent.run(9.9)
    assert agent.core.phase == UpdatePhase.INSTALLING
    agent.run(0.3)
    assert agent.last.state == "failed"
    assert "not done checking the bundle within 10 s (last: RAUC not reachable)" \
        in agent.last.text

    agent.rauc = ON_A
    downloaded(agent)
    agent.rauc = replace(ON_A, operation="installing", progress=60,
                         progress_text="Copying image to rootfs.1")
    agent.run(29.9)  # a card that hangs mid-write: the write's own deadline
    assert agent.core.phase == UpdatePhase.INSTALLING
    agent.run(0.3)
    assert agent.last.state == "failed"
    assert "not done writing the slot within 30 s (last: Copying image to rootfs.1)" \
        in agent.last.text
    agent.step(INSTALL)  # RAUC still holds the slot: refused with the reason
    assert agent.last.state == "refused"
    assert agent.last.text.startswith("busy: RAUC is still installing (Copying image")


def test_rauc_idle_again_with_no_result_ends_the_install() -> None:
    agent = healthy(SteppedAgent(config=FAST))
    downloaded(agent)
    agent.rauc = replace(ON_A, operation="installing", progress_text="Checking bundle")
    agent.step()
    agent.rauc = replace(ON_A, last_error="")  # idle, and no Completed signal came
    agent.run(2.9)
    assert agent.core.phase == UpdatePhase.INSTALLING
    agent.run(0.3)
    assert agent.last.text.startswith("RAUC stopped installing without a result")


def test_a_reboot_that_never_comes_ends_in_failed_saying_what_boots_next() -> None:
    agent = healthy(SteppedAgent(config=FAST))
    downloaded(agent)
    agent.rauc = replace(ON_A, completed=1, primary="rootfs.1")
    agent.run(1.0)
    assert agent.kinds()[-2:] == ["save_pending", "reboot"]
    agent.run(14.5)
    assert agent.core.phase == UpdatePhase.REBOOTING
    agent.run(1.0)
    assert (agent.last.state, agent.last.text) == (
        "failed", "no reboot within 15 s of asking for it; rootfs.1 boots next: reboot the "
                  "board")
