"""The ball tracker's hardware for the runtime: the camera (a frame source), the file
the tuned thresholds are kept in, the calibration file the guided calibration saves, and
the worker thread a learning or calibration job runs on."""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from typing import Any

from foosball.agents.ball_tracker.calibrating import (
    CalibrationJob,
    CalibrationOutcome,
    reply,
    run_calibration_job,
)
from foosball.agents.ball_tracker.core import LearnJob, LearnOutcome, run_learn_job
from foosball.vision.config import DetectorConfig, save_thresholds
from foosball.vision.sources import CapturedFrame, FrameSource
from foosball.wire.catalogue import CalibrationStage

log = logging.getLogger(__package__)  # its lines keep the name they had in one file


class Camera:
    """The tracker's hardware for the runtime: a frame source's frames as its samples; the
    thresholds the panel tuned are kept in `thresholds_file` (written whole, atomically);
    a LearnJob or CalibrationJob runs on a worker thread (at background priority: tracking
    goes first; the core hands out one at a time), its outcome is the sample of the next
    turn after it ends. An accepted calibration is saved to `calibration_file` (the one
    the tracker read at start; atomically, the old one kept as <file>.prev)."""

    def __init__(self, source: FrameSource, thresholds_file: str = "",
                 calibration_file: str = "") -> None:
        self.source = source
        self.thresholds_file = thresholds_file
        self.calibration_file = calibration_file
        self._outcomes: queue.SimpleQueue[LearnOutcome | CalibrationOutcome] = \
            queue.SimpleQueue()
        self._worker: threading.Thread | None = None

    def sense(self, timeout_s: float,
              ) -> CapturedFrame | LearnOutcome | CalibrationOutcome | None:
        try:
            return self._outcomes.get_nowait()
        except queue.Empty:
            return self.source.read(timeout_s)

    def act(self, actuation: Any) -> None:
        for action in actuation or ():
            if isinstance(action, DetectorConfig) and self.thresholds_file:
                try:
                    save_thresholds(self.thresholds_file, action)
                except OSError as exc:  # tracking goes on with them; they are lost at restart
                    log.error("cannot keep the thresholds in %s: %s", self.thresholds_file,
                              exc)
            elif isinstance(action, LearnJob):
                self._worker = threading.Thread(target=self._learn, args=(action,),
                                                name="ball_tracker-learn", daemon=True)
                self._worker.start()
            elif isinstance(action, CalibrationJob):
                self._worker = threading.Thread(target=self._calibrate, args=(action,),
                                                name="ball_tracker-calibrate", daemon=True)
                self._worker.start()

    def _learn(self, job: LearnJob) -> None:
        _background_priority()
        try:
            outcome = run_learn_job(job)
        except Exception as exc:  # a bug in learning must still answer the request
            log.exception("learning failed")
            outcome = LearnOutcome(job.request, None, f"learning failed: {exc}"[:200])
        self._outcomes.put(outcome)

    def _calibrate(self, job: CalibrationJob) -> None:
        _background_priority()
        try:
            outcome = run_calibration_job(job, self.calibration_file)
        except Exception as exc:  # a bug must still answer the request
            log.exception("calibration failed")
            outcome = CalibrationOutcome(reply(job.request, CalibrationStage.FAILED,
                                               f"calibration failed: {exc}"))
        self._outcomes.put(outcome)

    def wait_for_learning(self, timeout_s: float) -> bool:
        """True once no learning job runs (for tests and for closing)."""
        if self._worker is not None:
            self._worker.join(timeout_s)
        return self._worker is None or not self._worker.is_alive()

    def close(self) -> None:
        self.source.close()


def _background_priority() -> None:
    """This thread, not the agent: out of the step thread's real-time class (it inherited
    it) and niced, so learning never delays a frame (where the system does not allow it,
    or it is not Linux, the thread runs as it is)."""
    thread = threading.get_native_id()
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(thread, os.SCHED_OTHER, os.sched_param(0))
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, thread, 10)
