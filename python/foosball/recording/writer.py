"""Appending recordings to the data partition: bounded in size, off the caller's thread.

`RecordingWriter` takes encoded items (`begin(header)` starts a new file, `append(records)`
adds to it, `end()` closes it) and never blocks its caller: they go on a queue that a
thread of its own writes out. Each batch is one write(2) of whole records to a file opened
for appending, so:

- a crash of the process loses only what was still on the queue (what the agent handed over
  in the last moments, a step's worth), and the file holds whole records only;
- a power cut loses what the kernel had not yet written to the card: the writer syncs the
  file every `sync_period_s`, so at most that much; what reaches the card is still a prefix
  of the records, perhaps ending in one partial record, which the reader skips with a
  warning (format.py).

Rotation: a file that grows past `max_file_bytes` is closed and the match goes on in a new
file (the same header, part + 1); before a file is begun, the oldest recordings are deleted
until every file in the directory together stays under `max_total_bytes`. A full queue (the
card stalled for seconds) drops the newest batch and counts it, rather than grow without
bound or hold the caller up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foosball.recording.format import SUFFIX, encode_header

log = logging.getLogger(__name__)

QUEUE_BATCHES = 4096  # at the recorder's ~200 steps a second: 20 s of a stalled card


@dataclass
class WriterCounters:
    records: int = 0
    bytes: int = 0
    files: int = 0
    deleted: int = 0
    dropped_batches: int = 0
    errors: int = 0
    last_error: str = ""


def file_name(match: str, part: int) -> str:
    return f"match-{match}-{part:03d}{SUFFIX}"


class RecordingWriter:
    def __init__(self, directory: str | Path, *, max_file_bytes: int, max_total_bytes: int,
                 sync_period_s: float, monotonic: Callable[[], float] = time.monotonic,
                 thread: bool = True) -> None:
        self.directory = Path(directory)
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.sync_period_s = sync_period_s
        self.monotonic = monotonic
        self.counters = WriterCounters()
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(QUEUE_BATCHES)
        self._fd: int | None = None
        self._header: dict[str, Any] | None = None
        self._size = 0
        self._synced_s = -float("inf")
        self.current: Path | None = None
        self._thread: threading.Thread | None = None
        if thread:
            self._thread = threading.Thread(target=self._run, name="recording-writer",
                                            daemon=True)
            self._thread.start()

    # -- the caller's side: never waits ----------------------------------------------------
    def begin(self, head: dict[str, Any]) -> None:
        self._put("begin", head)

    def append(self, records: bytes, count: int) -> None:
        self._put("append", (records, count))

    def end(self) -> None:
        self._put("end", None)

    def _put(self, kind: str, item: Any) -> None:
        try:
            self._queue.put_nowait((kind, item))
        except queue.Full:
            self.counters.dropped_batches += 1

    def close(self, timeout_s: float = 5.0) -> None:
        """Write out what is queued and close the file."""
        self._put("stop", None)
        if self._thread is not None:
            self._thread.join(timeout_s)
        else:
            self.drain()

    # -- the writer's side -------------------------------------------------------------
    def _run(self) -> None:
        while self.handle(*self._queue.get()):
            pass

    def drain(self) -> None:
        """Handle everything queued, on this thread (tests, and writers without a thread)."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if not self.handle(*item):
                return

    def handle(self, kind: str, item: Any) -> bool:
        """One queued item; False after "stop"."""
        try:
            if kind == "begin":
                self._close_file()
                self._header = dict(item)
                self._open_file()
            elif kind == "append":
                self._append(*item)
            elif kind == "end":
                self._close_file()
                self._header = None
            elif kind == "stop":
                self._close_file()
                return False
        except OSError as exc:  # a full or failing card: count it, keep the agent running
            self.counters.errors += 1
            self.counters.last_error = f"{kind}: {exc}"[:200]
            log.warning("recording: %s: %s", kind, exc)
            self._fd = None  # the next begin tries a new file
        return True

    def _append(self, records: bytes, count: int) -> None:
        if self._fd is None:
            return  # no match begun (or its file failed): nothing to append to
        if self._size + len(records) > self.max_file_bytes and self._size > 0:
            assert self._header is not None
            self._close_file()
            self._header["part"] = int(self._header.get("part", 1)) + 1
            self._open_file()
        written = _write_all(self._fd, records)  # type: ignore[arg-type]
        self._size += written
        self.counters.records += count
        self.counters.bytes += written
        now = self.monotonic()
        if now - self._synced_s >= self.sync_period_s:
            os.fdatasync(self._fd)  # type: ignore[arg-type]
            self._synced_s = now

    def _open_file(self) -> None:
        assert self._header is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        head = encode_header(self._header)
        self.make_room(len(head))
        path = self.directory / file_name(str(self._header["match"]),
                                          int(self._header.get("part", 1)))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
        self._fd, self.current, self._size = fd, path, 0
        self._size = _write_all(fd, head)
        os.fsync(fd)
        _sync_directory(self.directory)  # the new name survives a power cut too
        self._synced_s = self.monotonic()
        self.counters.files += 1
        log.info("recording to %s", path)

    def _close_file(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def make_room(self, wanted: int) -> None:
        """Delete the oldest recordings until those left, the current file's share
        (`max_file_bytes`) and `wanted` fit in `max_total_bytes`."""
        files = sorted(self.directory.glob(f"match-*{SUFFIX}"), key=_age)
        sizes = {p: _size(p) for p in files}
        total = sum(sizes.values()) + wanted
        budget = self.max_total_bytes - self.max_file_bytes
        for path in files:
            if total <= budget:
                break
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            total -= sizes[path]
            self.counters.deleted += 1
            log.info("recording: deleted %s (over %d bytes in all)", path.name,
                     self.max_total_bytes)


def _write_all(fd: int, data: bytes) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    return len(data)


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _age(path: Path) -> tuple[float, str]:
    try:
        return (path.stat().st_mtime, path.name)
    except FileNotFoundError:
        return (0.0, path.name)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
