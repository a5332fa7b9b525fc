"""The agent stage: the run loop over the retrieved, guarded tools, its Answer and trace, and
the routed agent (the router decides first)."""

from toolrag.agent.loop import SYSTEM_PROMPT, Answer, TraceStep, build_agent, run_agent
from toolrag.agent.routed import ask_routed
from toolrag.agent.step_grammar import react_step_gbnf

__all__ = [
    "SYSTEM_PROMPT",
    "Answer",
    "TraceStep",
    "ask_routed",
    "build_agent",
    "react_step_gbnf",
    "run_agent",
]
