"""Fixtures of the EtherCAT suites: namespaces and emulator processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ethercat.netns import EmulatorProcess, Namespace


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
