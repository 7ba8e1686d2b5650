"""The simulated table: physics (`physics`, `drives`), realism parameters (`params`), the
controller interface and scripted opponents (`controllers`, `opponents`), the tracker's view
(`perception`), the match runner (`match`), the camera renderer (`render`), recording and
replay (`record`) and the `foosball sim` commands (`cli`). docs/notes/issue-3.md has the tour.

Laptop-side, with what consumes the simulator: the strategy's offline evaluations
(`tournament`, `tune`, `shots`, `fit`, `kick_eval`) and the vision's simulated scenes and
frame source (`vision_source`) with its bench and evaluation drivers (`vision_bench`).
"""
