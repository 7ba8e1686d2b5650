"""Strategy board: rod geometry helpers, ball prediction, kick engine, rod behaviours.

Modules: ``params`` (the parameter file), ``rods`` (geometry helpers), ``prediction``
(FC Portugal style free-ball model with wall bounces), ``kick`` (timed-phase kick engine),
``seed_rules`` (the seed paper's rules, exactly), ``improved`` (the stronger strategy).
The offline evaluations that run the simulator (tournament, tune, shots, fit, kick_eval)
and their job runner (``engine``) are in foosball.lab; `foosball strategy` is
foosball.strategy_cli.
"""
