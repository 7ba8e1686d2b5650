"""Signal handlers take no lock (issue 29): an agent hung on SIGTERM about once in 150-200
stops because its handler called Event.set() while the main thread was inside wait() on that
same Event, holding its (not reentrant) lock."""

from __future__ import annotations

import ast
import os
import signal
import threading
import time
from pathlib import Path

from foosball.safety.stop import StopRequest

PYTHON = Path(__file__).resolve().parents[2] / "python" / "foosball"


def test_an_event_set_in_a_handler_hangs_where_a_stop_request_does_not() -> None:
    """The state the signal found the main thread in, made on purpose: inside wait(), the
    event's lock held. The old handler (Event.set) cannot finish; the new one can."""
    event = threading.Event()
    with event._cond:  # type: ignore[attr-defined]  # as wait() holds it
        old = threading.Thread(target=event.set, daemon=True)
        old.start()
        old.join(timeout=0.5)
        assert old.is_alive()  # the hang, for as long as the lock is held
        stop = StopRequest()
        new = threading.Thread(target=stop.handle, args=(signal.SIGTERM, None), daemon=True)
        new.start()
        new.join(timeout=5.0)
        assert not new.is_alive() and stop.is_set() and stop.signum == signal.SIGTERM
    old.join(timeout=5.0)


def test_a_signal_during_the_wait_wakes_it_at_once() -> None:
    stop = StopRequest()
    previous = signal.signal(signal.SIGUSR2, stop.handle)
    try:
        threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGUSR2)).start()
        started = time.monotonic()
        assert stop.wait(30.0)  # the handler ran in this thread, in or before the wait
        assert time.monotonic() - started < 10.0  # woken by the fd, not by the timeout
        assert stop.wait(0.0) and stop.signum == signal.SIGUSR2
    finally:
        signal.signal(signal.SIGUSR2, previous)
        stop.close()


def test_a_wait_without_a_stop_times_out_false() -> None:
    stop = StopRequest()
    assert stop.wait(0.0) is False
    stop.set()
    stop.set()  # twice: still one flag, no error
    assert stop.wait(0.0) is True
    stop.close()


# What a handler may be: a StopRequest's own handler, the interpreter's dispositions, a
# lambda that only appends to a list or sets an attribute, or raises like the default SIGINT.
ALLOWED_LAMBDA_CALLS = {"append", "setattr"}
ALLOWED_NAMES = {"SIG_IGN", "SIG_DFL", "handle", "_interrupted"}


def handler_problem(handler: ast.expr) -> str | None:
    if isinstance(handler, ast.Attribute) and handler.attr in ALLOWED_NAMES:
        return None
    if isinstance(handler, ast.Name) and handler.id in ALLOWED_NAMES:
        return None
    if isinstance(handler, ast.Lambda):
        calls = [node for node in ast.walk(handler.body) if isinstance(node, ast.Call)]
        names = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "?")
                 for c in calls}
        if names <= ALLOWED_LAMBDA_CALLS:
            return None
        return f"a lambda calling {sorted(names - ALLOWED_LAMBDA_CALLS)}"
    return f"{ast.unparse(handler)}"


def restores_previous(function: ast.AST | None, handler: ast.expr) -> bool:
    """A name put back in a function that read it with signal.getsignal: the disposition
    that was there before (the caller's own, checked where it was installed)."""
    return (function is not None and isinstance(handler, ast.Name)
            and any(isinstance(node, ast.Attribute) and node.attr == "getsignal"
                    for node in ast.walk(function)))


def test_every_signal_handler_in_the_package_only_sets_a_flag() -> None:
    """Every signal.signal(...) in python/: a handler that could take a lock (Event.set,
    a runtime's stop, logging, ...) is refused here."""
    found, problems = 0, []
    for path in sorted(PYTHON.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "signal" and len(node.args) == 2
                    and ast.unparse(node.func.value) == "signal"):
                found += 1
                enclosing = next((f for f in reversed(functions)
                                  if node in ast.walk(f)), None)
                if restores_previous(enclosing, node.args[1]):
                    continue
                problem = handler_problem(node.args[1])
                if problem is not None:
                    problems.append(f"{path.relative_to(PYTHON)}:{node.lineno}: {problem}")
    assert found >= 5  # the walk sees them (agents, rig, flood, replay, camera, ...)
    assert problems == []


def test_a_handler_that_is_no_flag_is_refused() -> None:
    """The walk's judgement on a handler it must refuse, and on a restored one."""
    source = ("def f(runtime):\n    signal.signal(signal.SIGTERM, lambda *_: runtime.stop())\n"
              "def g():\n    old = signal.getsignal(signal.SIGTERM)\n"
              "    signal.signal(signal.SIGTERM, old)\n")
    f, g = ast.parse(source).body
    assert handler_problem(f.body[0].value.args[1]) == "a lambda calling ['stop']"
    assert restores_previous(g, g.body[1].value.args[1])
    assert not restores_previous(f, f.body[0].value.args[1])


def test_the_old_handlers_would_have_been_refused() -> None:
    for text in ("lambda *_: stop.set()", "runtime.stop"):
        assert handler_problem(ast.parse(text, mode="eval").body) is not None
