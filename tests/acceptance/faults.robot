*** Settings ***
Documentation       Faults: each case of the Agent runtime's fault matrix
...                 (foosball.rig.faults.matrix; the test names are its case names) injected
...                 into the playing rig. A board latches it, timed from the injection as
...                 the one that made it recorded it, within the product's own figures (the
...                 variables file says how each limit is made), every other board within one
...                 heartbeat period of the first (their logs, one clock on this host), every
...                 axis stops within 3 cycles of the motor driver's latch (the drives'
...                 own record), or by the drives' watchdog where the master cannot reach
...                 them; a negative interval is an error. Then
...                 a restart is refused while the cause is there, nothing resumes by itself
...                 once it is gone, and a restart pressed then brings the game back to wait
...                 for a start with every axis homed.
...                 On the single-host rig the cases that need the drive emulator or cables
...                 between boards are skipped, with the reason.
Resource            rig.resource
Suite Setup         The Rig Is Switched On And Ready
Suite Teardown      Switch Off The Rig
Test Setup          Prepare The Fault Case
Test Teardown       Remove What The Test Injected
Test Template       A Fault Halts The Game Until Its Cause Is Gone And Restart Is Pressed
Test Tags           sim    rig


*** Test Cases ***                          FAULT           LATCHED WITHIN (ms)
Every Case Of The Fault Matrix Has A Test
    [Template]    NONE
    [Setup]    NONE
    [Teardown]    NONE
    The suite has one test for each case of the fault matrix

drive 3: emergency button
    [Tags]    needs-emulator
    ${TEST NAME}    ${DETECT_MS}

drive 5: overcurrent
    [Tags]    needs-emulator
    ${TEST NAME}    ${DETECT_MS}

drive 0: motor locked
    [Tags]    needs-emulator
    ${TEST NAME}    ${DETECT_MS}

EtherCAT link down
    [Tags]    needs-namespaces    needs-emulator
    ${TEST NAME}    ${BUS_MS}

working counter: one slave deaf
    [Tags]    needs-emulator
    ${TEST NAME}    ${BUS_MS}

SIGKILL motor_driver
    [Tags]    needs-emulator
    ${TEST NAME}    ${LOSS_MS}

SIGSTOP motor_driver
    [Tags]    needs-emulator
    ${TEST NAME}    ${LOSS_MS}

SIGKILL pole_driver                         ${TEST NAME}    ${LOSS_MS}
SIGSTOP pole_driver                         ${TEST NAME}    ${LOSS_MS}
SIGKILL supervisory_panel                   ${TEST NAME}    ${LOSS_MS}
SIGSTOP supervisory_panel                   ${TEST NAME}    ${LOSS_MS}
SIGKILL ball_tracker                        ${TEST NAME}    ${LOSS_MS}
SIGSTOP ball_tracker                        ${TEST NAME}    ${LOSS_MS}
SIGKILL strategy                            ${TEST NAME}    ${LOSS_MS}
SIGSTOP strategy                            ${TEST NAME}    ${LOSS_MS}
SIGKILL game_panel                          ${TEST NAME}    ${LOSS_MS}
SIGSTOP game_panel                          ${TEST NAME}    ${LOSS_MS}

LAN partition: vision board unplugged
    [Tags]    needs-namespaces
    ${TEST NAME}    ${LOSS_MS}

camera lost                                 ${TEST NAME}    ${CAMERA_MS}
flood of 10,000 unsigned frames/s           ${TEST NAME}    ${DETECT_MS}


*** Keywords ***
A Fault Halts The Game Until Its Cause Is Gone And Restart Is Pressed
    [Arguments]    ${fault}    ${latched_within_ms}
    Given the game is playing
    When the fault ${fault} is injected
    Then a board latches the fault within ${latched_within_ms} ms of the injection
    And the game halts on every board within ${SPREAD_MS} ms of the first
    And every axis is stopped within ${STOP_CYCLES} cycles of the latch or by the drives' watchdog within ${WATCHDOG_MS} ms
    When restart is pressed
    Then the restart is refused
    When the cause of the fault is removed
    Then the game stays halted for 1 s
    When restart is pressed once the cause is gone
    Then the game waits for a start with every axis homed

Prepare The Fault Case
    The Rig Has What This Test Needs
    Reset The Game
