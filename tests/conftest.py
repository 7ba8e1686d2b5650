"""Shared test helpers: a fake clock and the root / network-namespace guard."""

from __future__ import annotations

import getpass
import os
import shutil
import tempfile
from pathlib import Path

import pytest


class FakeClock:
    """A clock tests move by hand: no sleeping, no flakiness."""

    def __init__(self, start_ns: int = 1_700_000_000_000_000_000) -> None:
        self.now = start_ns

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1e9)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def needs_root_netns() -> pytest.MarkDecorator:
    """Skip unless we can create network namespaces (root with iproute2); CI runs as root."""
    if os.geteuid() != 0:
        return pytest.mark.skip(reason="needs root to create network namespaces (CI runs as root)")
    if shutil.which("ip") is None:
        return pytest.mark.skip(reason="needs iproute2's `ip` to create network namespaces")
    return pytest.mark.netns


def screenshots_dir() -> Path:
    """Where the browser tests leave their screenshots. A test run leaves the work tree as it
    found it, so by default one folder beside pytest's own temporary folders, overwritten by
    each run; `FOOSBALL_SCREENSHOTS=docs/panels` refreshes the pictures the README shows."""
    chosen = os.environ.get("FOOSBALL_SCREENSHOTS")
    if chosen:
        return Path(chosen).resolve()
    return Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}" / "foosball-screenshots"
