*** Settings ***
Documentation       On booted boards each agent is a unit of its board's systemd, as on the
...                 robot: an agent that dies is started again by that systemd, as a new boot.
...                 Its loss halts the game on every board; once it is back its peers hear it
...                 again, a Restart pressed on the game panel is accepted by every agent, and
...                 Start on the game panel resumes the game. Needs the booted-boards rig
...                 (--variable RIG_MODE:booted, as root with systemd-nspawn); skipped on
...                 the others with the reason.
Resource            rig.resource
Suite Setup         Switch On The Booted Rig
Suite Teardown      Switch Off The Rig
Test Teardown       Remove What The Test Injected
Test Tags           sim    rig


*** Test Cases ***
A Killed Agent Is Restarted By Its Board's Systemd And The Game Resumes After Restart
    Given the game is playing
    And strategy runs under its board's systemd
    When the fault SIGKILL strategy is injected
    Then a board latches the fault within ${LOSS_MS} ms of the injection
    And the game halts on every board within ${SPREAD_MS} ms of the first
    And every axis is stopped within ${STOP_CYCLES} cycles of the latch
    And strategy is restarted by its board's systemd within 10 s
    And strategy beats again with a new boot id within 30 s
    When restart is pressed on the game panel until it is accepted
    Then every agent accepted the restart, strategy among them
    And the game waits for a start with every axis homed
    When Start is pressed on the game panel
    Then the game state is PLAYING
    And the strategy commands the rods
    And the ball is tracked


*** Keywords ***
Switch On The Booted Rig
    This Rig Boots Its Boards
    The Rig Is Switched On And Ready
