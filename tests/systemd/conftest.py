"""On a failed test of the booted board, show what its systemd saw."""

from __future__ import annotations

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    board = getattr(item, "funcargs", {}).get("board")
    if report.failed and board is not None:
        report.sections.append(("systemd inside the booted board", board.machine.diagnostics()))
