*** Settings ***
Documentation       Switching the robot on: every drive is aligned and homed, and the game is
...                 READY within ${READY_WITHIN_S} s (not before), without an alarm, every
...                 agent beating its heart. The rig is switched on by this suite.
Resource            rig.resource
Suite Setup         Switch On The Rig
Suite Teardown      Switch Off The Rig
Test Tags           sim    rig


*** Test Cases ***
Every Drive Is Aligned And Homed After Switching On
    Then every axis is aligned and homed within ${READY_WITHIN_S} s of switching on

The Game Is Ready Within The Stated Time
    Then the game is READY within ${READY_WITHIN_S} s of switching on
    And the game was not READY before every axis was homed

Switching On Raises No Alarm
    Given the game is READY within ${READY_WITHIN_S} s of switching on
    Then no alarm has been raised since switching on

Every Agent Beats Its Heart
    Given the game is READY within ${READY_WITHIN_S} s of switching on
    And every agent is running
    Then every agent beats its heart at least ${HEARTBEAT_HZ} times a second
