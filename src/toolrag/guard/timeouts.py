"""Run a tool with a deadline, and stop its thread when the deadline passes.

The call runs in a worker thread. Past the timeout the caller gets control back at once, and
the worker is stopped by raising :class:`ToolStopped` inside it
(``PyThreadState_SetAsyncExc``), which takes effect at its next Python bytecode: loops,
``time.sleep`` in slices, and library code between C calls. A tool blocked in one long C call
(a socket without a timeout) stops when that call returns; our REST and SQL tools carry their
own deadlines (httpx timeouts, the SQLite progress handler, PostgreSQL ``statement_timeout``).
"""

from __future__ import annotations

import contextvars
import ctypes
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class ToolStopped(BaseException):
    """Raised inside a tool's thread when its deadline has passed."""


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    stopped: bool = True  # False: the thread was still running when we gave up waiting


def _stop(thread: threading.Thread) -> None:
    ident = thread.ident
    if ident is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(ToolStopped))


def run_with_timeout(
    fn: Callable[[], Any], timeout_s: float, grace_s: float = 1.0, name: str = "toolrag-tool"
) -> Outcome:
    """``fn()`` in a worker thread named ``name``, in a copy of the caller's context (its
    context variables: event listeners, approvals, tracing spans); past ``timeout_s`` the
    thread is stopped."""
    outcome = Outcome()

    def target() -> None:
        try:
            outcome.value = fn()
        except ToolStopped:
            pass
        except BaseException as exc:  # reported to the caller, never raised into the agent
            outcome.error = exc

    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(target,), name=name, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not worker.is_alive():
        return outcome
    timed_out = Outcome(timed_out=True)
    for _ in range(int(grace_s / 0.05) + 1):
        _stop(worker)
        worker.join(0.05)
        if not worker.is_alive():
            return timed_out
    timed_out.stopped = False
    return timed_out
