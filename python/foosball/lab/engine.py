"""Where the many independent jobs of a tournament, a shot battery or a parameter search run.

One worker: in this process, one job after the other (no start-up cost; what the tests use).
More: on Ray (https://docs.ray.io), an existing distributed engine: a local Ray started for
the run with that many CPUs (and stopped after it), or the user's cluster at `ray_address`
(`ray start --head` on one machine, `ray start --address=...` on the others; every node needs
this package installed, as `./tools/setup` does). A job is plain data in, plain data out and
seeds its own random streams, so where it runs never changes its result: results come back
in the order of the work, whatever order the workers finish in.

Stopping: Ctrl-C, SIGTERM and SIGHUP reach the caller as KeyboardInterrupt (the CLIs set
that up) and the local Ray is shut down with its workers. A SIGKILLed caller leaves its
workers to notice (each checks that the process that started it is alive,
`_watch_driver`) and the rest of its local Ray to a reaper (`reaper.py`).
On a cluster the jobs still running are cancelled.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from foosball.lab import reaper

# Ray's object store holds the jobs and their results only (small dicts): keep it small
# rather than take its default of 30 % of the machine's memory
OBJECT_STORE_BYTES = 100 * 1024 * 1024
DRIVER_CHECK_S = 0.5
CONNECT_TIMEOUT_S = 5.0
_watching: set[int] = set()  # the driver pids a worker process already watches


class EngineError(RuntimeError):
    """The workers cannot be had: Ray missing, a cluster not answering."""


def run_jobs(fn: Callable[[Any], Any], work: Sequence[Any], workers: int,
             ray_address: str | None = None,
             on_result: Callable[[int], None] | None = None) -> list[Any]:
    """`[fn(job) for job in work]`, on `workers` workers (see the module docstring);
    `on_result(done)` after each job."""
    with Engine(workers, ray_address) as engine:
        return engine.map(fn, work, on_result)


class Engine:
    """Workers for many runs of jobs (a parameter search's tournaments): Ray is started once
    on entering (when it is used) and stopped on leaving."""

    def __init__(self, workers: int, ray_address: str | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.ray_address = ray_address
        self.on_ray = workers > 1 or ray_address is not None
        self._ray: Any = None
        self._reaper: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Engine:
        if self.on_ray:
            if self.ray_address is None:  # a local Ray: nothing of it outlives this process
                self._reaper = reaper.start()
            try:
                self._ray = _start_ray(self.workers, self.ray_address)
            except BaseException:
                self.__exit__()
                raise
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None
        if self._reaper is not None:
            reaper.stop(self._reaper)
            self._reaper = None

    def map(self, fn: Callable[[Any], Any], work: Sequence[Any],
            on_result: Callable[[int], None] | None = None) -> list[Any]:
        if not self.on_ray:
            results = []
            for job in work:
                results.append(fn(job))
                if on_result is not None:
                    on_result(len(results))
            return results
        if self._ray is None:
            raise RuntimeError("Engine.map on Ray outside `with Engine(...)`")
        ray = self._ray
        remote = ray.remote(num_cpus=1)(_run_watched)
        driver = os.getpid() if self.ray_address is None else None
        pending = {remote.remote(fn, job, driver): k for k, job in enumerate(work)}
        results: list[Any] = [None] * len(work)
        done = 0
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    results[pending.pop(ref)] = ray.get(ref)
                    done += 1
                    if on_result is not None:
                        on_result(done)
        finally:
            for ref in pending:  # stopped early: what is left must not play on
                ray.cancel(ref, force=True)
        return results


def _start_ray(workers: int, ray_address: str | None) -> Any:
    try:
        import ray
    except ModuleNotFoundError:
        raise EngineError("more than one worker runs on Ray, which is not installed: "
                           "pip install 'foosball[sim]' (./tools/setup does)") from None
    # ray.init puts its own SIGTERM handler in (it logs and exits 1): the caller's stay
    handlers = {signum: signal.getsignal(signum)
                for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    if ray_address is not None:
        _check_reachable(ray_address)
    if ray_address is None:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING, object_store_memory=OBJECT_STORE_BYTES)
    else:
        ray.init(address=ray_address, log_to_driver=False, logging_level=logging.WARNING)
    for signum, handler in handlers.items():
        if handler is not None:
            signal.signal(signum, handler)
    return ray


def _check_reachable(address: str) -> None:
    """A clear error for a cluster address nothing answers at (ray.init would retry for
    minutes, deaf to Ctrl-C); "auto" and ray:// addresses are left to Ray."""
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise EngineError(f"--ray-address {address!r}: expected HOST:PORT (or 'auto')")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise EngineError(f"no Ray cluster answers at {address}: {exc}") from None


def _run_watched(fn: Callable[[Any], Any], job: Any, driver: int | None) -> Any:
    if driver is not None:
        _watch_driver(driver)
    return fn(job)


def _watch_driver(driver: int) -> None:
    """In a local Ray worker: exit when the process that started the run is gone (it was
    SIGKILLed and could not shut Ray down)."""
    if driver in _watching:
        return
    _watching.add(driver)

    def watch() -> None:
        while True:
            try:
                os.kill(driver, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass  # alive, someone else's: cannot be ours, but do not guess
            time.sleep(DRIVER_CHECK_S)

    threading.Thread(target=watch, name="driver-watch", daemon=True).start()
