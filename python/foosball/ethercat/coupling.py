"""Coupling the emulated motors to a simulated table: motor radians -> rod poses.

`RodCoupling` is a motion listener for `DriveEmulator` (in-process) that turns the raw
motor samples into each robot rod's translation (m, table frame) and rotation (rad) through
the same geometry as the pole driver, and hands them to a callback. The simulator's glue is
one line, for example::

    RodCoupling(table, emulator.drives,
                lambda name, t, r, vt, vr: world.drive_rod_externally(
                    world.rod_index(name), t, r, vt, vr))

Across processes, `RodPosePublisher` sends the same poses as small JSON datagrams to a UDP
address (`foosball ethercat emulate --rod-poses HOST:PORT`), at most `rate_hz` a second.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Sequence
from typing import Any

from foosball.drivetrain import motor_to_translation, rotation_axis, translation_axis
from foosball.ethercat.drive import Cia402Drive, MotorSample

RodPoseSink = Callable[[str, float, float, float, float], None]


class RodCoupling:
    def __init__(self, table: Any, drives: Sequence[Cia402Drive], sink: RodPoseSink) -> None:
        self.rods = list(table.robot_rods)
        self.drives = drives
        self.sink = sink

    def poses(self, samples: Sequence[MotorSample]) -> list[tuple[str, float, float, float,
                                                                  float]]:
        out = []
        for index, rod in enumerate(self.rods):
            t, r = translation_axis(index), rotation_axis(index)
            if r >= len(samples):
                break
            translation, rotation = samples[t], samples[r]
            per_rad = rod.metres_per_motor_radian()
            from_switch = translation.position - self.drives[t].switch_position
            out.append((rod.name, motor_to_translation(rod, from_switch),
                        rotation.position, translation.velocity * per_rad,
                        rotation.velocity))
        return out

    def __call__(self, now_s: float, samples: Sequence[MotorSample]) -> None:
        for pose in self.poses(samples):
            self.sink(*pose)


class RodPosePublisher:
    """A motion listener that sends the rod poses to a UDP address as JSON."""

    def __init__(self, table: Any, drives: Sequence[Cia402Drive], address: tuple[str, int],
                 rate_hz: float = 200.0) -> None:  # the fastest camera
        self.coupling = RodCoupling(table, drives, lambda *pose: None)
        self.address = address
        self.period_s = 1.0 / rate_hz
        self.last_s = -1.0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def __call__(self, now_s: float, samples: Sequence[MotorSample]) -> None:
        if now_s - self.last_s < self.period_s:
            return
        self.last_s = now_s
        rods = [{"name": n, "translation": t, "rotation": r, "translation_velocity": vt,
                 "rotation_velocity": vr} for n, t, r, vt, vr in self.coupling.poses(samples)]
        payload = json.dumps({"t": now_s, "rods": rods}).encode()
        with contextlib.suppress(OSError):  # nobody listening yet: the bus must not care
            self.sock.sendto(payload, self.address)
