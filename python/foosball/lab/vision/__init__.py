"""The ball tracker's pipeline measured on the laptop, never on a board: `run` (the bench
and the accuracy evaluation on a scene), `bench`, `evaluate`, `seed_pipeline` (the
seed-style reference), `synthetic` (a small exact renderer). The pipeline itself is
foosball.vision."""
