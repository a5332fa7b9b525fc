"""Choosing the demo's questions: a balanced, deterministic pick from a question set."""

from __future__ import annotations

from collections.abc import Iterable

from toolrag.batch.questions import Question


def pick_questions(
    questions: Iterable[Question], available_tools: set[str], limit: int
) -> list[Question]:
    """Questions the available tools can answer: a blueprint question with a date range and a
    schedule question first, then one question per remaining tool, then round-robin."""
    eligible = [
        q
        for q in questions
        if q.expected_tools and set(q.expected_tools) <= available_tools and q.answer_keywords
    ]
    by_tool: dict[str, list[Question]] = {}
    for q in eligible:
        by_tool.setdefault(q.expected_tools[0], []).append(q)
    chosen: list[Question] = []
    date_range = next(
        (q for q in eligible if "start_date" in q.expected_args or "end_date" in q.expected_args),
        None,
    )
    schedule = next((q for q in by_tool.get("get_project_schedule", [])), None)
    for first in (date_range, schedule):
        if first is not None and first not in chosen:
            chosen.append(first)
    covered = {t for q in chosen for t in q.expected_tools}
    for tool, queue in sorted(by_tool.items()):  # one question per tool first
        if tool not in covered and len(chosen) < limit:
            chosen.append(queue[0])
            covered.add(tool)
    queues = [list(v) for _, v in sorted(by_tool.items())]
    while len(chosen) < limit and any(queues):
        for queue in queues:
            while queue and queue[0] in chosen:
                queue.pop(0)
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen[:limit]
