"""Fixtures of the EtherCAT suites: namespaces, emulator processes, a master in the namespace."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from netns import EmulatorProcess, Namespace


def _netns_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces and veth pairs (CI runs as root)"
    if shutil.which("ip") is None:
        return "needs iproute2's `ip` to create network namespaces"
    try:
        import pysoem  # noqa: F401
    except ImportError:
        return "needs pysoem (pip install 'foosball[ethercat]')"
    return None


NETNS_SKIP = _netns_skip_reason()
needs_netns = pytest.mark.skipif(NETNS_SKIP is not None, reason=NETNS_SKIP or "")


@pytest.fixture
def namespace() -> Iterator[Namespace]:
    ns = Namespace()
    try:
        yield ns
    finally:
        ns.delete()


@pytest.fixture
def emulator_factory(namespace: Namespace) -> Iterator[object]:
    started: list[EmulatorProcess] = []

    def start(drives: int = 8, extra: tuple[str, ...] = ()) -> EmulatorProcess:
        emulator = EmulatorProcess(namespace, drives, extra)
        started.append(emulator)
        return emulator

    try:
        yield start
    finally:
        for emulator in started:
            emulator.stop()
