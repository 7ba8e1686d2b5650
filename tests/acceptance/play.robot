*** Settings ***
Documentation       Play: started from READY, the robot plays the scripted human on the live
...                 table: its strategy commands the rods, the rods move, it saves the human's
...                 shots on target and scores (both within ${PLAY_S} s of the start, the
...                 simulator's own count); the game panel keeps the score the table counts
...                 while the game is playing; a paused game holds the rods.
Resource            rig.resource
Suite Setup         The Rig Is Switched On And Ready
Suite Teardown      Switch Off The Rig
Test Setup          Prepare The Test
Test Tags           sim    rig


*** Test Cases ***
The Robot Plays When The Game Is Started
    When the game is started
    Then the game state is PLAYING
    And the ball is tracked
    And the strategy commands the rods
    And the robot's rods move

The Robot Saves The Scripted Human's Shots And Scores
    [Tags]    sim    rig    needs-emulator
    Given the game is playing
    Then the robot saves at least ${SAVES} of the human's shots within ${PLAY_S} s
    And the robot scores within ${PLAY_S} s

The Game Panel Keeps The Score
    [Tags]    sim
    Given the game is playing
    When a goal the camera can tell is scored within ${PLAY_S} s
    Then the game panel counts every goal the camera can tell and no other

Pausing The Game Holds The Rods
    Given the game is playing
    When the game is paused
    Then the game state is PAUSED
    And the strategy sends no moving rod command for 1 s


*** Keywords ***
Prepare The Test
    The Rig Has What This Test Needs
    Reset The Game
