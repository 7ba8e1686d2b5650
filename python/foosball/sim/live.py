"""The simulated table in real time: the physical world of the simulated rig.

The robot's rods follow the emulated drives: the drive emulator publishes each rod's pose
(`foosball ethercat emulate --rod-poses 127.0.0.1:PORT`, the pole driver's geometry) and
every physics frame drives the rods to the latest pose. The human's side is played by a
scripted opponent, held still, or played by a person in a browser (`opponent="browser"`:
a `BrowserPlayer` serves its page on `player_port` and is shown the table's state). The
camera renders the live table when a frame is due, stamped with the wall clock as a real
camera's driver stamps it; the ball tracker reads those frames through its `socket` frame
source, unchanged.

Nothing here talks to the agents: the robot is played only through its motors and seen
only through the camera, as on the real table. For tests only, the table can tell where the
ball really is (`truth`): one UDP datagram per frame, JSON {t_ns: the frame's stamp, x, y
(m, table frame), in_play, visible (the share of the ball's pixels the men and rods leave in
sight), score_robot, score_human, saves_robot}, which no agent reads.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import time
from typing import Any

import numpy as np

from foosball.geometry import Table, default_table
from foosball.sim.match import Match
from foosball.sim.render import CameraConfig, Renderer

MAX_CATCH_UP_S = 0.1  # behind by more (the process was stopped): jump, do not race


class LiveTable:
    def __init__(self, opponent: str = "club", seed: int = 1, pose_port: int | None = None,
                 table: Table | None = None,
                 monotonic: Any = time.monotonic, wall_ns: Any = time.time_ns,
                 truth: tuple[str, int] | None = None,
                 player_port: int = 8090, player_host: str = "0.0.0.0") -> None:
        self.table = table or default_table()
        self.player: Any = None  # the BrowserPlayer when a person plays the human's rods
        human: Any = opponent
        if opponent == "browser":
            from foosball.sim.browser_player import BrowserPlayer

            human = self.player = BrowserPlayer(self.table, host=player_host, port=player_port)
        self.match = Match("hold", human, seed=seed, duration=math.inf, table=self.table)
        self.world = self.match.world
        self.renderer = Renderer(self.table, CameraConfig(), seed=seed)
        self.monotonic = monotonic
        self.wall_ns = wall_ns
        self._start: float | None = None
        self.poses_received = 0
        self._poses: socket.socket | None = None
        if pose_port is not None:
            self._poses = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._poses.bind(("127.0.0.1", pose_port))
            self._poses.setblocking(False)
        self._truth_to = truth
        self._truth: socket.socket | None = None
        if truth is not None:
            self._truth = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._truth.setblocking(False)
        self._robot_rods = {rod.name: self.world.rod_index(rod.name)
                            for rod in self.table.robot_rods}
        if self.player is not None:
            self.player.start()  # the page's server (raises if the port is taken)

    def _read_poses(self) -> None:
        """The newest pose of each robot rod from the emulator's datagrams."""
        if self._poses is None:
            return
        latest: dict[str, Any] = {}
        while True:
            try:
                data = self._poses.recv(65536)
            except BlockingIOError:
                break
            with contextlib.suppress(ValueError, KeyError, TypeError):
                for rod in json.loads(data)["rods"]:
                    latest[rod["name"]] = rod
            self.poses_received += 1
        for name, rod in latest.items():
            index = self._robot_rods.get(name)
            if index is not None:
                self.world.drive_rod_externally(
                    index, float(rod["translation"]), float(rod["rotation"]),
                    float(rod["translation_velocity"]), float(rod["rotation_velocity"]))

    def advance(self) -> None:
        """Play until the world's clock has caught up with real time."""
        now = self.monotonic()
        if self._start is None:
            self._start = now
        target = now - self._start
        if target - self.world.time > MAX_CATCH_UP_S:
            self._start = now - self.world.time  # the table was held up: resume from here
            target = self.world.time
        while self.world.time < target:
            self._read_poses()
            self.match.step_frame()
        if self.player is not None:
            self.player.show(self.world.state())  # the person's page draws it

    def next_frame(self, index: int) -> tuple[np.ndarray, int]:
        """The camera's frame now (CameraServer's callback)."""
        self.advance()
        state = self.world.state()
        frame = self.renderer.render(state)
        stamp = self.wall_ns()
        if self._truth is not None:
            score = self.world.score
            truth = {"t_ns": stamp, "x": state.ball_x, "y": state.ball_y,
                     "in_play": state.ball_in_play,
                     "visible": round(frame.visible_fraction, 3),
                     "score_robot": score.robot, "score_human": score.human,
                     "saves_robot": self.match.result.saves_robot}
            with contextlib.suppress(OSError):  # nobody listening: the table plays on
                self._truth.sendto(json.dumps(truth).encode(), self._truth_to)
        return frame.image, stamp

    def score(self) -> tuple[int, int]:
        return self.world.score.robot, self.world.score.human

    def close(self) -> None:
        if self._poses is not None:
            self._poses.close()
        if self._truth is not None:
            self._truth.close()
        if self.player is not None:
            self.player.close()
