"""Argument grounding: whether a call's values come from the question or from what the run has
read, checked before the call runs (identifiers, proper names, dates the question never gave)."""
