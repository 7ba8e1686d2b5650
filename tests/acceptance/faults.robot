*** Settings ***
Documentation       Faults: each case of the Agent runtime's fault matrix
...                 (foosball.rig.faults.matrix; the test names are its case names) injected
...                 into the playing rig. The game halts on every board, every axis stops,
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


*** Variables ***
${CAMERA_TIMEOUT_MS}    600     # the tracker counts the camera lost after 0.2 s


*** Test Cases ***                          FAULT           HALTED WITHIN (ms)
Every Case Of The Fault Matrix Has A Test
    [Template]    NONE
    [Setup]    NONE
    [Teardown]    NONE
    The suite has one test for each case of the fault matrix

drive 3: emergency button
    [Tags]    needs-emulator
    ${TEST NAME}    ${HALT_MS}

drive 5: overcurrent
    [Tags]    needs-emulator
    ${TEST NAME}    ${HALT_MS}

drive 0: motor locked
    [Tags]    needs-emulator
    ${TEST NAME}    ${HALT_MS}

EtherCAT link down
    [Tags]    needs-namespaces    needs-emulator
    ${TEST NAME}    ${HALT_MS}

working counter: one slave deaf
    [Tags]    needs-emulator
    ${TEST NAME}    ${HALT_MS}

SIGKILL motor_driver
    [Tags]    needs-emulator
    ${TEST NAME}    ${HALT_MS}

SIGSTOP motor_driver
    [Tags]    needs-emulator
    ${TEST NAME}    ${HALT_MS}

SIGKILL pole_driver                         ${TEST NAME}    ${HALT_MS}
SIGSTOP pole_driver                         ${TEST NAME}    ${HALT_MS}
SIGKILL supervisory_panel                   ${TEST NAME}    ${HALT_MS}
SIGSTOP supervisory_panel                   ${TEST NAME}    ${HALT_MS}
SIGKILL ball_tracker                        ${TEST NAME}    ${HALT_MS}
SIGSTOP ball_tracker                        ${TEST NAME}    ${HALT_MS}
SIGKILL strategy                            ${TEST NAME}    ${HALT_MS}
SIGSTOP strategy                            ${TEST NAME}    ${HALT_MS}
SIGKILL game_panel                          ${TEST NAME}    ${HALT_MS}
SIGSTOP game_panel                          ${TEST NAME}    ${HALT_MS}

LAN partition: vision board unplugged
    [Tags]    needs-namespaces
    ${TEST NAME}    ${HALT_MS}

camera lost                                 ${TEST NAME}    ${CAMERA_TIMEOUT_MS}
flood of 10,000 unsigned frames/s           ${TEST NAME}    ${HALT_MS}


*** Keywords ***
A Fault Halts The Game Until Its Cause Is Gone And Restart Is Pressed
    [Arguments]    ${fault}    ${halted_within_ms}
    Given the game is playing
    When the fault ${fault} is injected
    Then the game halts on every board within ${halted_within_ms} ms
    And every axis is stopped within ${STOP_MS} ms of the alarm
    When restart is pressed
    Then the restart is refused
    When the cause of the fault is removed
    Then the game stays halted for 1 s
    When restart is pressed once the cause is gone
    Then the game waits for a start with every axis homed

Prepare The Fault Case
    The Rig Has What This Test Needs
    Reset The Game
