"""Faults: in each case the agent keeps going and either answers or says plainly what it could
not do, and nothing is lost (the trace and the audit log keep every call). Scripted LLM; the
tools run through the same guard as the toolbox's."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import BaseTool, FunctionTool

from toolrag import ScriptedLLM
from toolrag.agent.loop import Answer, build_agent, run_agent
from toolrag.errors import ContextOverflowError
from toolrag.guard import AuditLog, IdempotencyStore, ToolGuard
from toolrag.guard.function_tools import RunState, guarded_tools
from toolrag.sample.field_api import running_server
from toolrag.tools.rest.spec import OpenAPIToolSpec, RestAPIConfig
from toolrag.tools.result import ToolResult
from toolrag.tools.self_timed import is_self_timed
from toolrag.tools.sql.spec import SQLSpecConfig, SQLToolSpec

from ..conftest import DATA, REPO, final, react


def lookup_permit(number: str) -> ToolResult:
    """Look up a building permit by its number. Use it for permit questions. It does not
    list permits."""
    return ToolResult.ok({"permit": number, "status": "issued"})


def broken_tool(x: str = "") -> ToolResult:
    """A tool whose backend crashes. Use it never. It does not work."""
    raise ConnectionResetError("backend went away")


def slow_tool(x: str = "") -> ToolResult:
    """A tool that never answers. Use it never. It does not return."""
    while True:
        time.sleep(0.01)


def flood_tool(x: str = "") -> ToolResult:
    """A tool that returns 10 MB. Use it never. It does not filter."""
    return ToolResult.ok({"blob": "z" * 10_000_000})


def _run(
    tools: Sequence[BaseTool], turns: list[Any], tmp_path: Path
) -> tuple[Answer, AuditLog, ScriptedLLM]:
    audit = AuditLog(tmp_path / "audit.sqlite")
    guard = ToolGuard(
        tools,
        [],
        audit=audit,
        store=IdempotencyStore(tmp_path / "idem.sqlite"),
        default_timeout_s=0.5,  # SQL and REST tools are SelfTimedTools: they keep their own
    )
    run = RunState()
    llm = ScriptedLLM(turns=turns)
    agent = build_agent(guarded_tools(guard, list(tools), run), llm)
    answer = asyncio.run(run_agent(agent, "What is the status of permit BP-7?", run_id=run.run_id))
    return answer, audit, llm


def _tools(*fns: Any) -> list[BaseTool]:
    return [FunctionTool.from_defaults(fn=f) for f in fns]


@pytest.mark.parametrize(
    ("bad", "code"),
    [(broken_tool, "INTERNAL_ERROR"), (slow_tool, "TIMEOUT"), (flood_tool, None)],
    ids=["raises", "hangs", "10MB"],
)
def test_a_failing_tool_does_not_stop_the_agent(tmp_path: Path, bad: Any, code: str | None) -> None:
    turns = [
        react(bad.__name__, {"x": "BP-7"}),
        react("lookup_permit", {"number": "BP-7"}),
        final("Permit BP-7 is issued."),
    ]
    started = time.monotonic()
    answer, audit, llm = _run(_tools(lookup_permit, bad), turns, tmp_path)
    assert time.monotonic() - started < 30
    assert [s.tool for s in answer.trace] == [bad.__name__, "lookup_permit"]
    assert answer.trace[0].error_code == code
    assert answer.trace[1].success and answer.answer == "Permit BP-7 is issued."
    if bad is flood_tool:  # capped: the next prompt stays small
        assert answer.trace[0].success
        assert max(len(str(m.content)) for m in llm.prompts[1]) < 20_000
    assert [r.tool for r in audit.tail(5)] == [bad.__name__, "lookup_permit"]


class SmallContextLLM(ScriptedLLM):
    """A scripted model with a 4,096-token context, as the local one has."""

    @property
    def metadata(self) -> Any:
        return super().metadata.model_copy(update={"context_window": 4096, "num_output": 384})


def test_long_tool_outputs_are_cut_to_fit_the_models_context(tmp_path: Path) -> None:
    # the guard lets ~16,000 characters of a result through; two of them overflow 4,096 tokens
    turns = [
        react("flood_tool", {"x": "a"}),
        react("flood_tool", {"x": "b"}),
        final("Permit BP-7 is issued."),
    ]
    guard = ToolGuard(_tools(flood_tool), [], audit=AuditLog(tmp_path / "a.sqlite"))
    run = RunState()
    llm = SmallContextLLM(turns=turns)
    agent = build_agent(guarded_tools(guard, _tools(flood_tool), run), llm)
    answer = asyncio.run(run_agent(agent, "What is the status of permit BP-7?", run_id=run.run_id))
    assert answer.answer == "Permit BP-7 is issued." and len(answer.trace) == 2
    last = llm.prompts[-1]
    assert sum(len(m.content or "") for m in last) <= (4096 - 384) * 3  # fits, by the estimate
    assert "characters cut to fit the model's context" in "".join(m.content or "" for m in last)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("Requested tokens (4168) exceed context window of 4096"),  # llama-cpp-python
        ContextOverflowError("The LLM server cannot take the prompt: it is longer than ..."),
    ],
    ids=["local", "server"],
)
def test_a_prompt_over_the_models_context_ends_in_an_answer_from_the_data(
    tmp_path: Path, error: Exception
) -> None:
    def overflow(messages: Sequence[ChatMessage]) -> str:
        raise error

    # the answer is read from the call that found data, by one tool-free completion
    turns = [react("lookup_permit", {"number": "BP-7"}), overflow, "Permit BP-7 is issued."]
    answer, _, llm = _run(_tools(lookup_permit), turns, tmp_path / "a")
    assert answer.answer == "Permit BP-7 is issued." and answer.stopped_early
    assert answer.context_overflow
    assert [s.tool for s in answer.trace] == ["lookup_permit"] and llm.remaining == 0
    # no call found data: a plain sentence, not the exception
    answer, _, _ = _run(_tools(lookup_permit), [overflow], tmp_path / "b")
    assert answer.answer.startswith("I could not finish: the conversation outgrew")
    assert answer.context_overflow and answer.llm_calls == 0
    # any other model failure is still raised
    with pytest.raises(RuntimeError, match="out of turns"):
        _run(_tools(lookup_permit), [], tmp_path / "c")


def test_the_llm_returning_garbage_three_times(tmp_path: Path) -> None:
    garbage = [
        "%%%% ??? <<<",
        'Thought: I need the permit.\nAction: lookup_permit\nAction Input: {"number": ',
        "Thought: I should",
    ]
    # three unreadable replies, then a good one: the agent reads past the garbage and answers
    turns = [*garbage, react("lookup_permit", {"number": "BP-7"}), final("BP-7 is issued.")]
    answer, _, _ = _run(_tools(lookup_permit), turns, tmp_path / "a")
    assert answer.answer == "BP-7 is issued." and answer.unreadable == 3
    assert [s.tool for s in answer.trace] == ["lookup_permit"]
    # nothing but garbage: a plain sentence, no exception, no garbage passed off as an answer
    answer, _, _ = _run(_tools(lookup_permit), garbage * 10, tmp_path / "b")
    assert answer.answer.startswith("I could not answer: the model's replies could not be read")
    assert answer.unreadable >= 3 and not answer.trace


def test_the_same_unreadable_reply_twice_is_not_asked_for_again(tmp_path: Path) -> None:
    # a model at temperature 0 given the same retry prompt writes the same reply: after the
    # second, the run asks once with the format spelled out instead of retrying to the cap
    stuck = "Thought: The result gives the status. Therefore, the answer to the question is:"
    turns = [react("lookup_permit", {"number": "BP-7"}), stuck, stuck, final("BP-7 is issued.")]
    answer, _, llm = _run(_tools(lookup_permit), turns, tmp_path)
    assert answer.answer == "BP-7 is issued." and llm.remaining == 0
    assert answer.unreadable == 2 and answer.repairs == 1
    assert "Your last reply could not be read" in (llm.prompts[-1][-1].content or "")


def test_the_rest_service_stopped_in_the_middle_of_a_run(tmp_path: Path) -> None:
    from toolrag.cards.openapi import load_document

    doc = load_document(REPO / "toolspecs" / "construction_api.openapi.json")
    server = running_server(DATA)
    url = server.__enter__()
    stopped: list[bool] = []

    def service_goes_down(messages: Sequence[ChatMessage]) -> str:
        server.__exit__(None, None, None)
        stopped.append(True)
        return react("get_site_status", {"project": "GRB-107"})

    turns = [
        react("list_rfis", {"project": "GRB-107", "status": "open"}),
        service_goes_down,
        final("The field API stopped answering, so I could not get the site status."),
        final("The field API stopped answering, so I could not get the site status."),
    ]
    try:
        config = RestAPIConfig(name="field", document="-", base_url=url, timeout_s=2, retries=1)
        wanted = ("list_rfis", "get_site_status")
        tools = [
            t for t in OpenAPIToolSpec(config, doc).to_tool_list() if t.metadata.name in wanted
        ]
        # REST tools keep their own deadline (timeout_s, retries), not the guard's 0.5 s here:
        # a refused connection, the retry pause and the second refusal can take longer than
        # 0.5 s on a loaded machine, which the guard would call TIMEOUT
        assert all(is_self_timed(t) for t in tools)
        answer, audit, _ = _run(tools, turns, tmp_path)
    finally:
        if not stopped:
            server.__exit__(None, None, None)
    assert [s.tool for s in answer.trace][:2] == ["list_rfis", "get_site_status"]
    assert answer.trace[0].success
    assert answer.trace[1].error_code == "NETWORK_ERROR" and answer.trace[1].recoverable
    assert "could not" in answer.answer
    assert [r.status for r in audit.tail(5)][:2] == ["ok", "error"]


def test_sqlite_locked_by_another_writer(tmp_path: Path, construction_sqlite: Path) -> None:
    db = tmp_path / "locked.sqlite"
    db.write_bytes(construction_sqlite.read_bytes())
    spec = SQLToolSpec.from_url(f"sqlite:///{db}", SQLSpecConfig(timeout_s=1.0))
    writer = sqlite3.connect(db, timeout=0)
    writer.execute("BEGIN EXCLUSIVE")  # another process writing: readers must wait
    try:
        tools = [t for t in spec.to_tool_list() if t.metadata.name == "run_sql"]
        turns = [
            react("run_sql", {"sql": "SELECT COUNT(*) FROM projects"}),
            final("The database is busy right now, so I could not count the projects."),
            final("The database is busy right now, so I could not count the projects."),
        ]
        answer, audit, _ = _run(tools, turns, tmp_path)
    finally:
        writer.rollback()
        writer.close()
    step = answer.trace[0]
    assert not step.success and step.recoverable
    assert "locked" in step.observation.lower() or "busy" in step.observation.lower()
    assert "could not" in answer.answer
    assert audit.tail(1)[0].status in ("error", "timeout")
    after = spec.execute("SELECT COUNT(*) FROM projects")  # the lock is gone: it works again
    assert after.success and after.data["rows"] == [[12]]
