"""Conversations: ``Toolbox.chat(session_id, message)`` keeps memory and the tools used across
turns; another session starts empty."""

from __future__ import annotations

from collections.abc import Callable

from toolrag import Toolbox

from ..conftest import final, react


def _prompt(tb: Toolbox) -> str:
    return "\n".join(m.content or "" for m in tb.llm.prompts[-1])  # type: ignore[attr-defined]


def test_chat_remembers_earlier_turns_and_keeps_used_tools(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory(
        [
            react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
            final("Substantial completion was reached on 2025-12-12."),
            final("That was 2025-12-12, as I said."),
            final("I do not know which project you mean."),
        ]
    )
    first = tb.chat("s1", "When did Fire Station 7 reach substantial completion?")
    assert first.tools_called == ["get_project_schedule"]
    second = tb.chat("s1", "Thanks, and could you repeat that in fewer words?")
    seen = _prompt(tb)
    assert "When did Fire Station 7 reach substantial completion?" in seen  # the first turn
    assert "2025-12-12" in seen
    assert "get_project_schedule" in second.tools_offered  # sticky: used before, still offered
    assert second.run_id != first.run_id  # each turn is its own run
    other = tb.chat("s2", "Thanks, and could you repeat that in fewer words?")
    assert "Fire Station 7" not in _prompt(tb)  # a new session has no memory
    assert "get_project_schedule" not in other.tools_offered  # nor the first one's tools
    assert "don't know" in other.answer or "do not know" in other.answer
    tb.end_chat("s1")
    assert "s1" not in tb._sessions


def test_a_follow_up_that_names_nothing_gets_its_tools_from_the_turn_before(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """The first turn calls no tool (so nothing is sticky); the follow-up names neither a
    project nor a tool. Alone it retrieves nothing; searched with the turn before it, the
    schedule tool is offered. The same follow-up opening another session gets none."""
    tb = toolbox_factory(
        [
            final("Which project do you mean?"),
            react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
            final("The milestone before it was dry-in, on 2025-09-30."),
            final("Before what? Which project do you mean?"),
        ]
    )
    first = tb.chat("s1", "When did Fire Station 7 reach substantial completion?")
    assert first.tools_called == []
    follow = tb.chat("s1", "and the one before that?")
    assert "get_project_schedule" in follow.tools_offered
    assert follow.tools_called == ["get_project_schedule"]
    alone = tb.chat("s2", "and the one before that?")
    assert "get_project_schedule" not in alone.tools_offered
