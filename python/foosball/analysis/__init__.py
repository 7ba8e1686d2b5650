"""Analysis of recorded matches, laptop-side: what happened (`match`, pure), the HTML report
with its plots (`report`, matplotlib: the `report` extra), and `foosball replay` on the game
panel's page (`replay`, `replay_cli`)."""
