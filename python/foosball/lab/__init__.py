"""The laptop's offline evaluations: what runs the simulator to measure the robot, never on
a board (no board package imports it; no image installs it: image-config/python-modules.toml
lists none of it, and tests/architecture and tests/images hold both).

- `tournament`: strategies against each other and the scripted opponents (`foosball sim
  tournament`, `foosball strategy tournament`);
- `tune`: the strategy parameters searched against a tournament (`foosball sim tune`);
- `shots`: the shot battery, save rates against scripted shots (`foosball strategy shots`);
- `fit`: the ball prediction's friction fitted to the simulator (`foosball strategy fit-ball`);
- `kick_eval`: the kick engine measured in the simulator (`foosball strategy kick-eval`);
- `vision_bench`: the vision pipeline's bench and evaluation on simulated scenes
  (`foosball vision bench`, `foosball vision evaluate`).

The simulator itself (physics, match runner, opponents, renderer) is foosball.sim; the
learning table (`foosball learn`) is foosball.learning, the match reports foosball.analysis.
"""
