"""The ReAct prompt is laid out for prompt caches: what every question shares (the rules and
the reply format) comes first and byte-identical; the retrieved tools and the question last."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from llama_cpp.llama import LlamaState
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.tools import FunctionTool

from toolrag import ScriptedLLM
from toolrag.agent.loop import SYSTEM_PROMPT, build_agent
from toolrag.models.local_llm import (
    LocalLlamaCPP,
    PromptStates,
    _without_extra_buffers,
    amx_build,
    reused_prefix,
    shared_prefix,
)
from toolrag.models.usage import cached_tokens
from toolrag.routing.router import Router


def search_documents(query: str) -> str:
    """Search the project documents. Args: query: what to look for."""
    return query


def get_project_schedule(project: str) -> str:
    """A project's schedule. Args: project: the project code."""
    return project


def list_inspections(project: str) -> str:
    """A project's inspections. Args: project: the project code."""
    return project


def common_prefix(a: str, b: str) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return a[:n]


def prompt(tools: list, question: str) -> str:
    agent = build_agent(tools, ScriptedLLM(turns=[]))
    messages = agent.formatter.format(tools, [ChatMessage(role=MessageRole.USER, content=question)])
    return "".join(f"<{m.role.value}>{m.content}" for m in messages)


def test_two_questions_share_a_prefix_holding_the_instructions() -> None:
    a = prompt([FunctionTool.from_defaults(search_documents)], "What is the LD rate?")
    b = prompt(
        [
            FunctionTool.from_defaults(get_project_schedule),
            FunctionTool.from_defaults(list_inspections),
        ],
        "When does GRB-107 finish?",
    )
    shared = common_prefix(a, b)
    assert SYSTEM_PROMPT in shared  # the rules
    assert "## Output Format" in shared and "Answer: [your answer here" in shared
    assert "## Tools\n\nYou have access to the following tools:" in shared
    for name in ("search_documents", "get_project_schedule", "list_inspections"):
        assert name not in shared  # the retrieved tools come after the shared part
    assert a.index("search_documents") < a.index("What is the LD rate?")  # the question last


def test_cached_prompt_tokens_are_read_where_the_server_reports_them() -> None:
    openai = {"usage": {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 768}}}
    llama_cpp = {"usage": {"prompt_tokens": 900}, "timings": {"cache_n": 640}}
    assert cached_tokens(openai) == 768 and cached_tokens(llama_cpp) == 640
    assert cached_tokens({"usage": {"prompt_tokens": 900}}) is None  # llama-cpp-python's server


class _HeldTokens:
    """llama_cpp.Llama's surface that ``reused_prefix`` reads: a tokenizer (one token per
    character here) and the tokens its KV cache holds."""

    def __init__(self, held: str, bos: bool = False, reply: dict[str, Any] | None = None) -> None:
        self._input_ids = np.array([ord(c) for c in held], dtype=np.intc)
        self._bos = bos
        self._model = self
        self.reply = reply or {}
        self.context_params = SimpleNamespace(n_ctx=4096)  # LlamaCPP.metadata reads it

    def __call__(self, prompt: str, **kwargs: Any) -> dict[str, Any]:  # a completion
        return self.reply

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return [ord(c) for c in text.decode()]

    def token_bos(self) -> int:
        return 1

    def add_bos_token(self) -> bool:
        return self._bos


def test_the_local_model_counts_the_prefix_its_cache_holds() -> None:
    held = _HeldTokens("rules|tool a|Q1|answer 1")
    assert reused_prefix(held, "rules|tool b|Q2") == len("rules|tool ")
    assert reused_prefix(held, "other rules") == 0
    # the whole prompt cached: llama-cpp-python evaluates its last token again
    assert reused_prefix(held, "rules|tool a|Q1") == len("rules|tool a|Q1") - 1
    assert reused_prefix(_HeldTokens(""), "rules") == 0  # a fresh model
    assert reused_prefix(_HeldTokens("\x01rules|x", bos=True), "rules|y") == len("\x01rules|")
    assert reused_prefix(object(), "rules") is None  # not a llama_cpp.Llama


def test_a_local_completion_reports_its_cached_tokens_in_openais_shape() -> None:
    llm = LocalLlamaCPP.model_construct(generate_kwargs={}, model_path="q.gguf")  # none loaded
    reply = {"choices": [{"text": "A2"}], "usage": {"prompt_tokens": 8}}
    llm._model = _HeldTokens("rules|Q1|A1", reply=reply)
    response = llm.complete("rules|next", formatted=True)
    assert response.text == "A2"
    assert cached_tokens(response.raw) == len("rules|")


def _state(tokens: str, size: int = 10) -> LlamaState:
    ids = np.array([ord(c) for c in tokens], dtype=np.intc)
    return LlamaState(ids, np.zeros((1, 1), np.single), len(ids), b"x" * size, size, 0)


def _key(text: str) -> tuple[int, ...]:
    return tuple(ord(c) for c in text)


def test_prompt_states_give_the_state_sharing_the_longest_prefix() -> None:
    states = PromptStates(capacity_bytes=1_000)
    states[_key("router rules|Q1|JSON")] = _state("router rules|Q1|JSON")
    states[_key("agent header|Q1|Answer")] = _state("agent header|Q1|Answer")
    assert states[_key("router rules|Q2")].n_tokens == len("router rules|Q1|JSON")
    assert states[_key("agent header|Q2")].n_tokens == len("agent header|Q1|Answer")
    assert states.longest(_key("router rules|Q2"))[1] == len("router rules|Q")
    with pytest.raises(KeyError):
        states[_key("zzz")]  # no stored prompt opens with "z"
    assert _key("zzz") not in states and _key("router") in states


def test_a_state_that_a_newer_one_extends_is_dropped() -> None:
    states = PromptStates(capacity_bytes=1_000)
    states[_key("header|Q1")] = _state("header|Q1")
    states[_key("header|Q1|step 1")] = _state("header|Q1|step 1")  # the next turn
    states[_key("header|Q2")] = _state("header|Q2")  # shares less: both stay
    assert list(states.states) == [_key("header|Q1|step 1"), _key("header|Q2")]


def test_prompt_states_drop_the_least_recently_used_past_their_bytes() -> None:
    states = PromptStates(capacity_bytes=25)
    states[_key("a|1")] = _state("a|1")
    states[_key("b|1")] = _state("b|1")
    states[_key("a|2")]  # a lookup keeps "a|1" in use
    states[_key("c|1")] = _state("c|1")  # 30 bytes: the oldest unused one goes
    assert set(states.states) == {_key("a|1"), _key("c|1")}
    assert states.cache_size == 20
    states[_key("big")] = _state("big", size=100)  # over capacity alone: kept, the rest go
    assert list(states.states) == [_key("big")]


def test_the_local_model_counts_a_stored_states_prefix() -> None:
    held = _HeldTokens("agent header|Q1|Answer")  # what the KV cache holds now
    held.cache = PromptStates()
    held.cache[_key("router rules|Q1|JSON")] = _state("router rules|Q1|JSON")
    assert reused_prefix(held, "router rules|Q2") == len("router rules|Q")
    assert reused_prefix(held, "agent header|Q2") == len("agent header|Q")


def test_shared_prefix_counts_leading_tokens() -> None:
    assert shared_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert shared_prefix([1, 2], [1, 2, 3]) == 2
    assert shared_prefix([], [1]) == 0 and shared_prefix([9], [1]) == 0


def test_a_state_is_keyed_by_the_tokens_it_holds() -> None:
    """A completion saves under its prompt and reply, but its last sampled token was never
    evaluated: the key is cut to what the state holds, so the reuse count is exact."""
    states = PromptStates()
    states[_key("rules|Q1|A1!")] = _state("rules|Q1|A1")
    assert list(states.states) == [_key("rules|Q1|A1")]
    assert states.longest(_key("rules|Q1|A1!|next"))[1] == len("rules|Q1|A1")


def test_a_build_running_amx_kernels_is_told_from_its_system_info() -> None:
    info = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
    assert amx_build(info)
    assert not amx_build(info.replace("AMX_INT8 = 1", "AMX_INT8 = 0"))
    assert not amx_build("CPU : SSE3 = 1 | AVX2 = 1 | FMA = 1 | REPACK = 1 |")


def test_models_loaded_without_extra_buffers_get_the_flag_and_the_default_comes_back() -> None:
    import llama_cpp

    default = llama_cpp.llama_cpp.llama_model_default_params
    with _without_extra_buffers():
        assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is False
    assert llama_cpp.llama_cpp.llama_model_default_params is default
    assert default().use_extra_bufts is True


def run_sql(sql: str, limit: int = 50) -> str:
    """Run one read-only SELECT on the database. Tables: projects(code, name, client, status,
    contract_value, start_date, substantial_completion), invoices(invoice_no, project_code,
    vendor_id, amount, status), vendors(vendor_id, name, trade, city). Args: sql: one SELECT.
    limit: most rows to return."""
    return sql


def test_router_prompts_share_the_offered_tools_they_have_in_common() -> None:
    # the search ranked the tools differently for each question; listed in one fixed order
    # (longest block first), both prompts open with the long SQL tool's block
    sql, docs, schedule, inspections = (
        FunctionTool.from_defaults(f)
        for f in (run_sql, search_documents, get_project_schedule, list_inspections)
    )
    router = Router(ScriptedLLM(turns=[]))
    assert router.tool_order == "cache"
    a = router.prompt("What is the LD rate?", [docs, sql, inspections], [])
    b = router.prompt("When does GRB-107 finish?", [schedule, sql], [])
    shared = common_prefix(a, b)
    assert "- run_sql: " in shared and "limit (integer, optional)" in shared
    assert a.index("- run_sql: ") < a.index("- search_documents: ") < a.index("What is the LD")
    for tools in ([docs, sql, inspections], [inspections, docs, sql]):
        assert router.prompt("What is the LD rate?", tools, []) == a  # the search's order
    # as the search ranked them: nothing past the instructions is shared
    ranked = Router(ScriptedLLM(turns=[]), tool_order="relevance")
    a = ranked.prompt("What is the LD rate?", [docs, sql, inspections], [])
    b = ranked.prompt("When does GRB-107 finish?", [schedule, sql], [])
    assert "run_sql" not in common_prefix(a, b)
    assert a.index("- search_documents: ") < a.index("- run_sql: ")


def test_react_prompts_list_the_tools_in_the_same_fixed_order() -> None:
    # plain react mode: the retriever's ranking changes from question to question; the prompt
    # lists the tools longest block first, so both questions share the SQL tool's block
    sql, docs, schedule = (
        FunctionTool.from_defaults(f) for f in (run_sql, search_documents, get_project_schedule)
    )
    a = prompt([docs, sql], "What is the LD rate?")
    b = prompt([schedule, sql], "When does GRB-107 finish?")
    shared = common_prefix(a, b)
    assert "> Tool Name: run_sql" in shared
    assert prompt([sql, docs], "What is the LD rate?") == a  # whatever the search's order
    assert a.index("Tool Name: run_sql") < a.index("Tool Name: search_documents")
    # as ranked, on request
    agent = build_agent([docs, sql], ScriptedLLM(turns=[]), tool_order="relevance")
    messages = agent.formatter.format(
        [docs, sql], [ChatMessage(role=MessageRole.USER, content="What is the LD rate?")]
    )
    text = str(messages[0].content)
    assert text.index("Tool Name: search_documents") < text.index("Tool Name: run_sql")
