"""Strategy board: rod geometry helpers, ball prediction, kick engine, rod behaviours.

Modules: ``params`` (the parameter file), ``rods`` (geometry helpers), ``prediction``
(FC Portugal style free-ball model with wall bounces), ``kick`` (timed-phase kick engine),
``seed_rules`` (the seed paper's rules, exactly), ``improved`` (the stronger strategy),
``tournament`` (many simulated matches), ``kick_eval`` (the kick engine measured in the simulator).
"""
