"""The laptop's offline evaluations: what runs the simulator to measure the robot, never on
a board (no board package imports it; no image installs it: image-config/python-modules.toml
lists none of it, and tests/architecture and tests/images hold both).

- `tournament`: strategies against each other and the scripted opponents (`foosball sim
  tournament`, `foosball strategy tournament`);
- `tune`: the strategy parameters searched against a tournament (`foosball sim tune`);
- `shots`: the shot battery, save rates against scripted shots (`foosball strategy shots`);
- `fit`: the ball prediction's friction fitted to the simulator (`foosball strategy fit-ball`);
- `kick_eval`: the kick engine measured in the simulator (`foosball strategy kick-eval`);
- `engine`: where the many jobs of a tournament, a tune or the shot battery run (in the
  process, or on Ray);
- `vision/`: the vision pipeline measured offline: `run` (`foosball vision bench`,
  `foosball vision evaluate` on a scene), `bench` (our tracker and the seed-style pipeline
  timed on the same frames), `evaluate` (accuracy against ground truth), `seed_pipeline`
  (the seed-style reference detector), `synthetic` (a small exact renderer for tests and
  benchmarks without the simulator).

The simulator itself (physics, match runner, opponents, renderer) is foosball.sim; the
learning table (`foosball learn`) is foosball.learning, the match reports foosball.analysis.
"""
