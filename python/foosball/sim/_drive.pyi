# Types of the compiled module built from _drive.c (see its comments).
from foosball.sim.drives import _Tick

def advance(position: list[float], velocity: list[float], accel: list[float], i: int,
            target: float, cap: float, tick: _Tick) -> bool: ...
