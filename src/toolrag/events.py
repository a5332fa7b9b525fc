"""Agent events as they happen, for callers that show progress (a notebook, a CLI, a web page).

A run emits typed :class:`AgentEvent` objects: the tools retrieved, the router's decision, each
model step, each tool call and its result, each approval, and finally the answer. Code that
runs an agent calls :func:`emit`; a caller listens with :func:`listening` (a callback for the
duration of a block) or iterates :meth:`toolrag.Toolbox.astream`. Nothing is emitted when
nobody listens, and a listener that raises never breaks the run.

The listener travels in a context variable, so it follows the run into tasks and threads the
run starts (``asyncio.create_task`` and ``asyncio.to_thread`` copy the context).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Collection, Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

EventKind = Literal[
    "tools_retrieved", "route", "model_step", "tool_call", "tool_result", "approval", "answer"
]


class AgentEvent(BaseModel):
    """One thing that happened in a run."""

    kind: EventKind
    seconds: float = Field(0.0, description="Seconds since the listener started.")
    tool: str | None = None
    step: int | None = Field(None, description="The tool call's step in the trace.")
    arguments: dict[str, Any] | None = None
    tools: list[str] = Field(default_factory=list, description="Tools retrieved or offered.")
    text: str = Field("", description="The model's reply, a tool's result or the answer.")
    success: bool | None = None
    data: dict[str, Any] = Field(default_factory=dict, description="The kind's extra fields.")

    def line(self) -> str:
        """One human-readable line (the CLI's ``--stream`` output)."""
        head = f"[{self.seconds:6.2f}s] {self.kind}"
        if self.kind == "tools_retrieved":
            searched = f" ({self.text})" if self.text else ""
            names = tool_labels(
                self.tools, self.data.get("required_by") or {}, self.data.get("named") or ()
            )
            return f"{head}: {', '.join(names)}{searched}"
        if self.kind == "tool_call":
            return f"{head} {self.step}: {self.tool}({self.arguments})"
        if self.kind == "tool_result":
            status = "ok" if self.success else f"error {self.data.get('error_code')}"
            return f"{head} {self.step}: {self.tool} -> {status}: {self.text[:160]}"
        return f"{head}: {self.text[:200]}"


def tool_labels(
    tools: list[str], required_by: dict[str, str], named: Collection[str] = ()
) -> list[str]:
    """The offered tools as a trace names them: a prerequisite with the tool that needs it,
    "Search_Car_Rentals (for Vehicle_Details)", and a tool the question names as such,
    "send_email (named)"."""

    def label(tool: str) -> str:
        if tool in required_by:
            return f"{tool} (for {required_by[tool]})"
        return f"{tool} (named)" if tool in named else tool

    return [label(t) for t in tools]


Listener = Callable[[AgentEvent], Any]
_listener: contextvars.ContextVar[tuple[Listener, float] | None] = contextvars.ContextVar(
    "toolrag_event_listener", default=None
)


def emit(kind: EventKind, **fields: Any) -> None:
    """Send an event to the current listener, if any (never raises)."""
    current = _listener.get()
    if current is None:
        return
    listener, started = current
    with contextlib.suppress(Exception):
        listener(AgentEvent(kind=kind, seconds=round(time.perf_counter() - started, 3), **fields))


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Call ``listener`` with every event emitted inside the block."""
    token = _listener.set((listener, time.perf_counter()))
    try:
        yield
    finally:
        _listener.reset(token)


__all__ = ["AgentEvent", "EventKind", "emit", "listening"]
