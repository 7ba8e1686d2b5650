*** Settings ***
Documentation       The panels in Debian's Chromium (SeleniumLibrary): the game panel's page
...                 loads and shows the game, Start on the page changes the GameState on the
...                 wire, the page shows the score the game panel keeps, and after a fault its
...                 Restart works only once the cause is gone; the camera is calibrated from
...                 the game panel's Camera tab though it hangs on another board; the
...                 supervisory panel's page shows every axis and the EtherCAT link.
Library             SeleniumLibrary    timeout=10 s
Resource            rig.resource
Suite Setup         Switch On The Rig And Open The Game Panel
Suite Teardown      Close The Browsers And Switch Off The Rig
Test Setup          Reset The Game
Test Teardown       Remove What The Test Injected
Test Tags           sim    rig


*** Test Cases ***
The Game Panel Page Loads And Shows The Game
    Then the page shows the game READY
    And the page shows the score 0:0

Start On The Page Starts The Game
    Given the page shows the game READY
    When Start is clicked on the page
    Then the game state is PLAYING
    And the page shows the game PLAYING

The Page Shows Exactly The Score The Game Panel Keeps
    [Tags]    sim
    Given the game is playing
    When a goal the camera can tell is scored within ${PLAY_S} s
    Then the game panel counts every goal the camera can tell and no other
    When the game is paused
    Then the page shows exactly the score the game panel keeps

Restart On The Page Works Only Once The Cause Is Gone
    Given the game is playing
    When the fault camera lost is injected
    Then the page shows the game FAULT
    And restart cannot be clicked on the page
    When the cause of the fault is removed
    And restart is clicked on the page once it can be
    Then the game waits for a start with every axis homed
    And the page shows the game PAUSED

The Operator Calibrates The Camera From The Game Panel
    [Documentation]    The Camera tab asks the ball tracker on the vision board over the wire.
    ...    Look shows the tracker's own frame with the layout's markers found, Calibrate
    ...    accepts, and the tracker keeps the new calibration and maps the ball with it at
    ...    once, without a restart.
    Given the page shows the game READY
    When the Camera tab is opened on the page
    And Look is clicked on the page
    Then the page shows the camera's frame with all 6 markers of the layout found
    When Calibrate is clicked on the page
    Then the page shows the calibration accepted and saved
    And the vision board keeps the new calibration and the old one beside it
    And the ball tracker reports a calibration made in the last 60 s
    [Teardown]    Click Element    css:[data-tab="game-tab"]

The Supervisory Panel Shows Every Axis And The EtherCAT Link
    When the supervisory panel is opened
    Then the page shows 8 axes homed
    And the page shows the EtherCAT link up
    [Teardown]    Switch Browser    game


*** Keywords ***
Switch On The Rig And Open The Game Panel
    The Rig Is Switched On And Ready
    ${address}=    The Address Of The Game Panel
    Open Chromium    ${address}    game    800,480
    Wait Until Page Contains Element    id:state

Open Chromium
    [Documentation]    Debian's chromium, headless, at the panel's display size.
    [Arguments]    ${address}    ${alias}    ${size}
    Open Browser    ${address}    chrome    alias=${alias}    executable_path=${CHROMEDRIVER}
    ...    options=binary_location="${CHROMIUM}";add_argument("--headless");add_argument("--no-sandbox");add_argument("--disable-gpu");add_argument("--disable-dev-shm-usage");add_argument("--no-first-run");add_argument("--window-size=${size}")

Close The Browsers And Switch Off The Rig
    Close All Browsers
    Switch Off The Rig

The Page Shows The Game ${state}
    Wait Until Element Contains    id:state    ${state}

The Page Shows The Score ${robot}:${human}
    [Documentation]    Each team's score, its element's whole text ("10" is not "1").
    Wait Until Keyword Succeeds    10 s    0.2 s    Element Text Should Be    id:score-robot    ${robot}
    Wait Until Keyword Succeeds    10 s    0.2 s    Element Text Should Be    id:score-human    ${human}

The Page Shows Exactly The Score The Game Panel Keeps
    [Documentation]    The score of the GameState the game panel sends while PAUSED (no goal
    ...    counts then, so the page and the wire cannot be a goal apart).
    ${game}=    The Game Panel's Score While Paused
    The Page Shows The Score ${game.score_robot}:${game.score_human}

Start Is Clicked On The Page
    Wait Until Element Is Enabled    id:start
    Click Button    id:start

Restart Cannot Be Clicked On The Page
    Element Should Be Disabled    id:restart

Restart Is Clicked On The Page Once It Can Be
    Wait Until Element Is Enabled    id:restart    30 s
    Click Button    id:restart

The Camera Tab Is Opened On The Page
    Click Element    css:[data-tab="calib-tab"]
    Wait Until Element Is Visible    id:look

Look Is Clicked On The Page
    Wait Until Element Is Enabled    id:look
    Click Button    id:look

Calibrate Is Clicked On The Page
    Wait Until Element Is Enabled    id:calibrate    30 s
    Click Button    id:calibrate

The Page Shows The Camera's Frame With All ${count} Markers Of The Layout Found
    Wait Until Element Contains    id:calib-text    found ${count} of the layout's ${count} markers    30 s

The Page Shows The Calibration Accepted And Saved
    Wait Until Element Contains    id:calib-verdict    ACCEPTED    60 s
    Element Should Contain    id:calib-verdict    saved to

The Supervisory Panel Is Opened
    ${address}=    The Address Of The Supervisory Panel
    Open Chromium    ${address}    supervisory    1366,768

The Page Shows ${count} Axes Homed
    [Documentation]    Homed: ready, or running (enabled, holding or following its target).
    Wait Until Keyword Succeeds    10 s    0.5 s    The Page Shows Exactly ${count} Homed Axes

The Page Shows Exactly ${count} Homed Axes
    ${homed}=    Get Element Count
    ...    css:#axis-rows span[data-state="ready"], #axis-rows span[data-state="running"]
    ${rows}=    Get Text    id:axis-rows
    Should Be Equal As Integers    ${homed}    ${count}    the page's axes: ${rows}

The Page Shows The EtherCAT Link Up
    Wait Until Element Contains    id:link-up    up
