*** Settings ***
Documentation       The whole robot plays against a scripted human on the simulated rig:
...                 six agents as processes on three boards, the real EtherCAT master driving
...                 the drive emulator, the live table seen by the camera the tracker reads.
...                 With another library (\${TABLE_LIBRARY}) the same suite runs on the real rig.
Library             ${TABLE_LIBRARY}
Suite Setup         Start The Simulated Rig
Suite Teardown      Stop The Simulated Rig

*** Variables ***
${TABLE_LIBRARY}    ${CURDIR}/SimulatedRig.py

*** Test Cases ***
The Robot Plays When The Game Is Started
    Given every agent is running
    When the game is started
    Then the game state is PLAYING
    And the ball is tracked
    And the strategy commands the rods
    And the robot's rods move

Pausing The Game Holds The Rods
    Given the game is started
    When the game is paused
    Then the game state is PAUSED
    And the strategy sends no rod commands

A Killed Agent Stops Every Motor Until It Is Back And Restart Is Pressed
    Given the game is started
    When the agent strategy is killed
    Then every axis is quick stopped within 100 ms
    When restart is pressed
    Then the restart is refused
    When the agent strategy is started again
    Then the robot recovers
