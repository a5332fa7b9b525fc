"""Which part of a question no call served: one call serves one part, by any of the part's
best few tools."""

from __future__ import annotations

from toolrag.agent.loop import Answer, TraceStep, _open_part, _served_parts


def _step(tool: str) -> TraceStep:
    return TraceStep(step=1, tool=tool, arguments={}, success=True)


def test_a_call_of_a_parts_second_tool_serves_it() -> None:
    # the subcontract part's best tool by retrieval is the document search; the router ran SQL
    wanted = [["search_documents", "run_sql", "list_projects"], ["get_site_status", "get_news"]]
    assert _served_parts(wanted, ["run_sql", "get_site_status"]) == {0, 1}


def test_one_call_serves_one_part() -> None:
    wanted = [["schedule", "site"], ["site", "schedule"]]
    assert len(_served_parts(wanted, ["schedule"])) == 1
    assert _served_parts(wanted, ["schedule", "schedule"]) == {0, 1}  # two calls of one tool


def test_the_assignment_that_serves_the_most_parts_wins() -> None:
    # greedy in question order would give the only SQL call to part 0 and leave part 1 open
    wanted = [["run_sql", "search_documents"], ["run_sql"]]
    assert _served_parts(wanted, ["run_sql", "search_documents"]) == {0, 1}


def test_the_open_part_is_asked_for_with_its_best_tool_when_offered() -> None:
    parts = [
        ("what is the subcontract worth", "search_documents"),
        ("when is drywall due", "schedule"),
    ]
    part_tools = [["search_documents", "run_sql"], ["schedule", "blueprints"]]
    answer = Answer(question="q", answer="")
    prior = [_step("run_sql"), _step("site")]  # the router's calls: SQL, and a wrong tool
    offered = ["run_sql", "site", "schedule", "search_documents"]
    assert _open_part(parts, prior, answer, offered, part_tools) == parts[1]
    assert _open_part(parts, prior, answer, ["run_sql", "site"], part_tools) is None
    answer.trace.append(_step("schedule"))
    assert _open_part(parts, prior, answer, offered, part_tools) is None
    # without the best few, a part is served by its best tool alone
    assert _open_part(parts, prior, answer, offered) == parts[0]
