"""The ``openai_like`` path against real OpenAI-compatible servers on 127.0.0.1 serving the
sample GGUF (tests/llmserver.py): llama-cpp-python's own ``python -m llama_cpp.server``, and
llama.cpp's ``llama-server`` (native tool calls, a prompt cache it reports).

Two servers, started on first use, as docs/llm-servers.md says to run them: ``--chat_format
chatml`` for the ReAct modes, and ``chatml-function-calling`` (which accepts ``tools``) for
``function`` mode, with tool results sent as user messages (its template drops ``tool`` ones).
Each model turn costs 15-40 s on two cores, so the file holds few questions; answers are
checked with the batch scorer, never timings.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolrag import Settings, Toolbox
from toolrag.batch import Question, answer_matches
from toolrag.errors import ModelMissingError
from toolrag.models.local import require_model

from ..conftest import DATA
from ..llmserver import MODEL_ALIAS, llama_cpp_server, llama_server

pytestmark = pytest.mark.local_llm

LD = "What is the liquidated damages rate in the Riverside Medical Office Building prime contract?"
DISPUTED = "What is the total amount of disputed invoices across all projects?"


def _model() -> Path:
    try:
        return require_model(Settings().model_dir)
    except ModelMissingError as exc:  # CI installs it; a bare checkout says what to run
        pytest.fail(exc.one_line())


@pytest.fixture(scope="module")
def react_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llmserver") / "chatml.log"
    with llama_cpp_server(_model(), chat_format="chatml", log=log) as url:
        yield url


@pytest.fixture(scope="module")
def function_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llmserver") / "chatml-function-calling.log"
    with llama_cpp_server(_model(), chat_format="chatml-function-calling", log=log) as url:
        yield url


@pytest.fixture(scope="module")
def native_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's own llama-server (scripts/llama_server.sh builds it): the model's template
    with native tool calls, and a prompt cache that it reports."""
    log = tmp_path_factory.mktemp("llmserver") / "llama-server.log"
    with llama_server(_model(), log=log) as url:
        yield url


@pytest.fixture
def server_toolbox(sample_index_dir: Path, tmp_path: Path) -> Callable[..., Toolbox]:
    def make(url: str, mode: str = "react", **extra: object) -> Toolbox:
        settings = Settings(
            data_dir=DATA,
            index_dir=sample_index_dir,
            state_dir=tmp_path / "state",
            llm_provider="openai_like",
            api_base=url,
            llm_model=MODEL_ALIAS,
            agent_mode=mode,  # type: ignore[arg-type]
            **extra,  # type: ignore[arg-type]
        )
        return Toolbox(settings)

    return make


def test_react_streams_and_answers_through_the_server(
    react_server: str, server_toolbox: Callable[..., Toolbox]
) -> None:
    """The question that called run_sql on a made-up column, then search_documents with {}
    three times: the prompt reaches the model unescaped and the step stops at Observation."""
    tb = server_toolbox(react_server)

    async def events() -> list:
        return [e async for e in tb.astream(LD)]

    got = asyncio.run(events())
    answer = got[-1].data["answer"]
    kinds = [e.kind for e in got]
    assert kinds[0] == "tools_retrieved" and kinds[-1] == "answer", kinds
    assert {"model_step", "tool_call", "tool_result"} <= set(kinds), kinds
    searches = [s for s in answer.trace if s.tool == "search_documents"]
    assert searches and all(s.arguments.get("query") for s in searches), answer.trace
    assert answer_matches(answer.answer, ["2500"]), (answer.answer, answer.trace)
    assert answer.prompt_tokens > 0  # the server's usage reaches the answer


def test_router_then_react_holds_the_decision_to_its_schema_through_the_server(
    react_server: str, server_toolbox: Callable[..., Toolbox]
) -> None:
    """router+react: the router's decision is asked for with a response_format carrying its
    JSON schema. llama-cpp-python's server refuses ``json_schema`` and takes ``json_object``
    with the schema, which its grammar then enforces, so the decision is valid as written."""
    tb = server_toolbox(react_server, "router+react")

    async def events() -> list:
        return [e async for e in tb.astream(LD)]

    got = asyncio.run(events())
    answer = got[-1].data["answer"]
    route = next(e for e in got if e.kind == "route")
    assert route.success and not route.data["repaired"], route
    decision = json.loads(route.text)
    assert decision["action"] == "call_tools" and decision["calls"], decision
    assert tb.llm._formats == ["json_object", "none"]  # type: ignore[attr-defined]
    assert answer.prompt_tokens > 0 and answer.route_id
    # the decision's own token counts, in the trace beside the agent's steps'
    assert 0 < route.data["prompt_tokens"] < answer.prompt_tokens, route.data
    assert route.data["completion_tokens"] > 0, route.data
    assert answer_matches(answer.answer, ["2500"]), (answer.answer, answer.trace)


def test_function_mode_calls_tools_through_the_server(
    function_server: str, server_toolbox: Callable[..., Toolbox]
) -> None:
    """The question that ended in HTTP 500 (an assistant message with content null)."""
    tb = server_toolbox(function_server, "function", tool_result_role="user")
    answer = tb.ask(DISPUTED)
    # the 1.5B model's first SQL may name a column that does not exist; it reads the error
    assert answer.tools_called and answer.tools_called[0] == "run_sql", answer.trace
    assert any(s.success for s in answer.trace if s.tool == "run_sql"), answer.trace
    assert answer_matches(answer.answer, ["220765"]), (answer.answer, answer.trace)


def test_chat_keeps_the_conversation_through_the_server(
    react_server: str, server_toolbox: Callable[..., Toolbox]
) -> None:
    tb = server_toolbox(react_server)
    first = tb.chat("s1", LD)
    assert answer_matches(first.answer, ["2500"]), (first.answer, first.trace)
    second = tb.chat("s1", "Thanks. Repeat just that daily figure, in a few words.")
    assert answer_matches(second.answer, ["2500"]), (second.answer, second.trace)


def test_batch_runs_concurrent_requests_against_the_server(
    react_server: str, server_toolbox: Callable[..., Toolbox], tmp_path: Path
) -> None:
    # One server slot answers both requests in turns. A request that waits its turn past the
    # client's timeout is sent again while the server still works on the first copy, so the
    # timeout must cover a queued turn (docs/llm-servers.md).
    tb = server_toolbox(react_server, llm_timeout_s=900)
    questions = [
        Question(id="ld", query=LD, answer_keywords=["2500"]),
        Question(id="sql", query=DISPUTED, answer_keywords=["220765"]),
    ]
    out = tmp_path / "answers.jsonl"
    summary = tb.batch(questions, out, concurrency=2, timeout_s=900)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.total == 2 and summary.failed == 0, records
    assert {r["id"] for r in records} == {"ld", "sql"}
    assert all(r.get("answer") for r in records), records
    # both answered through the one server; the 1.5B model is not held to both being right
    assert summary.accuracy is not None and summary.accuracy >= 0.5, records


def test_llama_server_reuses_the_fixed_prompt_prefix_across_questions(
    native_server: str, server_toolbox: Callable[..., Toolbox]
) -> None:
    """The ReAct prompt puts what repeats first, so a new question's first call reads that
    prefix from llama-server's cache: the reply says how many tokens it reused."""
    tb = server_toolbox(native_server)
    first = tb.ask(LD)
    assert answer_matches(first.answer, ["2500"]), (first.answer, first.trace)
    assert first.cached_prompt_tokens is not None  # the server says, and the answer keeps it

    async def events() -> list:
        return [e async for e in tb.astream(DISPUTED)]

    got = asyncio.run(events())
    steps = [e for e in got if e.kind == "model_step"]
    opening = steps[0].data
    # the fixed part (rules, format) is a few hundred tokens; the retrieved tools differ
    assert opening["cached_prompt_tokens"] >= 200, opening
    assert opening["cached_prompt_tokens"] < opening["prompt_tokens"], opening
    answer = got[-1].data["answer"]
    assert answer.cached_prompt_tokens >= opening["cached_prompt_tokens"]


def test_llama_server_takes_the_router_schema_as_json_schema(
    native_server: str, server_toolbox: Callable[..., Toolbox]
) -> None:
    tb = server_toolbox(native_server, "router+react")

    async def events() -> list:
        return [e async for e in tb.astream(LD)]

    got = asyncio.run(events())
    route = next(e for e in got if e.kind == "route")
    assert route.success and not route.data["repaired"], route
    assert tb.llm._formats[0] == "json_schema"  # type: ignore[attr-defined]
    answer = got[-1].data["answer"]
    assert answer_matches(answer.answer, ["2500"]), (answer.answer, answer.trace)
