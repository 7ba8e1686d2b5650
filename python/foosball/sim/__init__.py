"""The simulated table: physics (`physics`, `drives`), realism parameters (`params`), the
controller interface and scripted opponents (`controllers`, `opponents`), the tracker's view
(`perception`), the match runner (`match`), the camera renderer (`render`), recording and
replay (`record`), the live table (`live`, `browser_player`) and the vision's simulated
scenes and frame source (`vision_source`). docs/notes/issue-3.md has the tour.

What consumes the simulator to evaluate the robot offline (tournament, tune, the shot
battery, fits, the kick and vision benches) is foosball.lab; the `foosball sim` commands
are foosball.sim_cli.
"""
