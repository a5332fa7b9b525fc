"""Argument grounding: whether a call's values come from the question or from what the run has
read, checked before the call runs (identifiers, proper names, dates the question never gave)."""

from toolrag.guard.grounding.calls import Grounded, ground_call
from toolrag.guard.grounding.copied import drop_copied_filters
from toolrag.guard.grounding.values import Ungrounded, ungrounded_values

__all__ = [
    "Grounded",
    "Ungrounded",
    "drop_copied_filters",
    "ground_call",
    "ungrounded_values",
]
