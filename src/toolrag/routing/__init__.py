"""Routing: a few-shot router that turns a question and its retrieved tools into validated tool
calls (or a direct answer, or a clarifying question), with examples chosen per question."""

from toolrag.routing.examples import Example, ExampleStore, LeakageError
from toolrag.routing.feedback import DecisionLog, DecisionRecord
from toolrag.routing.models import RouteDecision, RouteResult, ToolCallSpec
from toolrag.routing.router import ExampleMode, Router

__all__ = [
    "DecisionLog",
    "DecisionRecord",
    "Example",
    "ExampleMode",
    "ExampleStore",
    "LeakageError",
    "RouteDecision",
    "RouteResult",
    "Router",
    "ToolCallSpec",
]
