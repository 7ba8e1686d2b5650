"""The compiled modules: the ball detector's colour threshold (foosball/vision/_band.c) and
the simulator's drive law and rod ray cast (foosball/sim/_loops.c, whose Python twins are in
drives.py and physics.py);
everything else is in pyproject.toml. setup.py because setuptools reads extension modules
from pyproject.toml only from version 74 on, and Yocto scarthgap ships 69.1. The editable
install (`./tools/setup`) builds it in place: run it again after changing the C file."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("foosball.vision._band", ["foosball/vision/_band.c"],
                             libraries=["m"]),  # lrint
                   # no fused multiply-adds: the same roundings as the Python twins
                   Extension("foosball.sim._loops", ["foosball/sim/_loops.c"],
                             libraries=["m"], extra_compile_args=["-ffp-contract=off"])])
