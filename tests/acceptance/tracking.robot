*** Settings ***
Documentation       Tracking: the ball the tracker reports (BallState on the agent LAN) is
...                 where the simulator's ball really is (the live table's truth, frame by
...                 frame, matched by capture stamp), within ${TRACKING_MM} mm (within
...                 ${TRACKING_HIDDEN_MM} mm when part of the ball is hidden), and it reaches the LAN
...                 soon after its frame is taken.
Resource            rig.resource
Suite Setup         The Rig Is Switched On And Ready
Suite Teardown      Switch Off The Rig
Test Setup          Reset The Game
Test Tags           sim


*** Test Cases ***
The Ball Is Reported While It Is In Play
    Given the game is playing
    When the camera takes 600 frames
    Then the ball is reported in ${TRACKED_PCT} % of the frames in which it is in play and in sight

The Reported Ball Is Within 5 mm Of The Simulator's Truth
    [Documentation]    A ball partly under a man is held to its own, wider bound.
    Given the game is playing
    When the camera takes 600 frames
    Then the reported ball is within ${TRACKING_MM} mm of the truth in ${TRACKING_PCT} % of the frames showing the whole ball, and within ${TRACKING_HIDDEN_MM} mm when part of it is hidden

The Reported Ball Reaches The LAN Soon After Its Frame Is Taken
    [Documentation]    Over 600 frames the 1 % allowed late is six frames, not three. A frame
    ...                comes every 20 ms, so one 70 ms hold of the shared 2-core test host
    ...                makes about four late frames: over 300 frames that alone failed the
    ...                case (fresh-clone run 32: 4 of 299 late, p99 74 ms). Two holds still do.
    [Tags]    sim    rig
    Given the game is playing
    When the camera takes 600 frames
    Then ball states reach the LAN within ${CAPTURE_TO_LAN_MS} ms of capture in 99 % of the frames
