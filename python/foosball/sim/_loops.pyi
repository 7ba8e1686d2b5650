# Types of the compiled module built from _loops.c (see its comments).
from collections.abc import Callable

from foosball.sim.drives import _Tick

def advance(position: list[float], velocity: list[float], accel: list[float], i: int,
            target: float, cap: float, tick: _Tick) -> bool: ...
def rod_hit(t0: float, r0: float, vt0: float, vr0: float, t1: float, r1: float, vt1: float,
            vr1: float, rod_x: float, offsets: list[float], ball_x: float, ball_y: float,
            t_start: float, horizon: float, dt: float, vx: float, vy: float, height: float,
            reach: float, half_width: float, radius: float,
            memo: dict[float, tuple[float, float] | None],
            man_interval: Callable[[float], tuple[float, float] | None],
            ) -> tuple[float, float, float, int, float, float, float, float] | None: ...
