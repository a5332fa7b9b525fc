"""End to end on the real local model (Qwen2.5-Coder-1.5B via llama.cpp), in the agent mode a
user gets without flags (``router+react``, decision 0046; the scripted tests pin ``react``): the
expected tool is called for a schedule question, a blueprint date-range question and a document
question, SQL over Chinook, and a user's own collections."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from toolrag import Settings, Toolbox
from toolrag.errors import ModelMissingError
from toolrag.models.local import require_model

pytestmark = pytest.mark.local_llm
# the default mode, not the scripted tests' pin (conftest's TEST_ENV)
DEFAULT_MODE = Settings.model_fields["agent_mode"].default


@pytest.fixture(scope="module")
def local_toolbox(sample_index_dir: object) -> Toolbox:
    from ..conftest import DATA

    settings = Settings(
        data_dir=DATA, index_dir=sample_index_dir, llm_provider="local", agent_mode=DEFAULT_MODE
    )
    try:
        require_model(settings.model_dir)
    except ModelMissingError as exc:  # CI installs it; a bare checkout says what to run
        pytest.fail(exc.one_line())
    return Toolbox(settings)


@pytest.mark.parametrize(
    ("question", "tool", "check_args"),
    [
        (
            "When is substantial completion planned for the Summit Ridge Hotel?",
            "get_project_schedule",
            lambda a: "project" in a,
        ),
        (
            "Which blueprint sheets for the Summit Ridge Hotel were revised between "
            "2026-01-01 and 2026-03-31?",
            "search_blueprints",
            lambda a: str(a.get("start_date", "")).startswith("2026-01"),
        ),
        (
            "What is the liquidated damages rate in the Riverside Medical Office Building "
            "prime contract?",
            "search_documents",
            lambda a: bool(a.get("query")),
        ),
    ],
    ids=["schedule", "blueprint-date-range", "documents"],
)
def test_local_model_calls_the_expected_tool(
    local_toolbox: Toolbox, question: str, tool: str, check_args: object
) -> None:
    answer = local_toolbox.ask(question)
    assert answer.trace, f"no tool was called; answer: {answer.answer!r}"
    assert answer.trace[0].tool == tool, answer.trace
    assert check_args(answer.trace[0].arguments), answer.trace[0].arguments  # type: ignore[operator]
    assert answer.trace[0].success and answer.sources and answer.answer
    # the local model reports the prompt tokens its KV cache held (issue 51): the ReAct turns
    # after the router's call start with the router's own prompt
    assert answer.cached_prompt_tokens, answer
    assert 0 < answer.cached_prompt_tokens < answer.prompt_tokens


CHINOOK_LOCAL = ["chinook-01", "chinook-03", "chinook-04"]


@pytest.fixture(scope="module")
def chinook_toolbox(tmp_path_factory: pytest.TempPathFactory) -> Toolbox:
    """The local model over Chinook (a database nobody here wrote): a toolbox of run_sql
    alone, as a user with only this database would configure it."""
    from toolrag.sample.chinook import build_chinook_sqlite

    from ..conftest import DATA

    work = tmp_path_factory.mktemp("chinook-local")
    db = build_chinook_sqlite(work / "chinook.sqlite")
    specs = work / "toolspecs"
    specs.mkdir()
    (specs / "sql.yaml").write_text(
        'name: chinook\ndescription: "A digital music store: artists, albums, tracks, genres, '
        'playlists, customers, employees and invoices."\nexpose: [run_sql]\n'
    )
    settings = Settings(
        data_dir=DATA,
        index_dir=work / "indexes",
        llm_provider="local",
        agent_mode=DEFAULT_MODE,
        compute_tools=False,  # run_sql alone
        database_url=f"sqlite:///{db}",
        toolspecs_dir=specs,
    )
    return Toolbox(settings)


@pytest.mark.parametrize("qid", CHINOOK_LOCAL)
def test_local_model_queries_chinook(chinook_toolbox: Toolbox, qid: str) -> None:
    import json

    from ..conftest import REPO

    lines = (REPO / "tests" / "fixtures" / "chinook_questions.jsonl").read_text().splitlines()
    question = next(json.loads(x) for x in lines if x.strip() and json.loads(x)["id"] == qid)
    assert [t.metadata.name for t in chinook_toolbox.tools()] == ["run_sql"]
    answer = chinook_toolbox.ask(question["question"])
    sql_steps = [s for s in answer.trace if s.tool == "run_sql"]
    assert sql_steps, f"run_sql was not called: {answer.trace}"
    assert all(s.arguments.get("sql") for s in sql_steps)
    # Whether the 1.5B model's SQL was right varies; the trace shows it either way.
    print(qid, [s.arguments["sql"] for s in sql_steps], "->", answer.answer)


def test_local_model_answers_from_a_users_own_collections(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A folder of a user's own files (no sample data), declared with collections.yaml: the
    local model finds the HTML page's fact through the generated search tool."""
    from ..collection_files import corpus_settings, make_corpus

    root = make_corpus(tmp_path_factory.mktemp("own-local"))
    toolbox = Toolbox(corpus_settings(root, llm_provider="local", agent_mode=DEFAULT_MODE))
    assert not [e for r in toolbox.index() for e in r.errors]
    answer = toolbox.ask("How many characters must a password have at least?")
    assert [s.tool for s in answer.trace][:1] == ["search_policies"], answer.trace
    assert "14" in answer.answer, answer.answer
    assert any(s.file == "policies/it/passwords.html" for s in answer.sources)


def test_a_prompt_started_from_a_stored_state_answers_as_a_fresh_one() -> None:
    """The local model keeps earlier prompts' states (``PromptStates``): a prompt that opens
    like one two calls back starts from that state, reports the shared opening as cached, and
    writes what a fresh evaluation wrote."""
    from toolrag.models import make_llm
    from toolrag.models.usage import cached_tokens

    llm = make_llm(Settings(llm_provider="local"))
    opening_a = "You list colours. Reply with three colour names separated by commas.\n"
    opening_b = "You count. Reply with the next three numbers separated by commas.\n"
    first = llm.complete(opening_a + "Start after: red")
    other = llm.complete(opening_b + "Start after: 7")  # the KV cache holds another prompt
    again = llm.complete(opening_a + "Start after: red")
    assert again.text == first.text
    # beyond the chat template both share, the whole opening came from the stored state
    template = cached_tokens(other.raw) or 0
    assert (cached_tokens(again.raw) or 0) >= template + len(opening_a.split())


def test_a_held_reply_checked_greedy_first_writes_what_the_full_check_writes() -> None:
    """Under a grammar at temperature 0, the local model tests the greedy token first
    (``grammar_first``): the reply is the one the grammar's test of every candidate gives,
    token for token, and most tokens are settled by the first check."""
    from llama_cpp import LlamaGrammar

    from toolrag.agent.step_grammar import react_step_gbnf
    from toolrag.models import make_llm

    llm = make_llm(Settings(llm_provider="local"))
    counts = llm.grammar_counts  # type: ignore[attr-defined]
    tools = ["run_sql", "search_documents", "search_blueprints", "get_project_schedule"]
    gbnf = react_step_gbnf(tools)
    for question in (
        "Which sheets were revised in May 2025? Results: A-101 (2025-05-02), A-102 (2025-05-20).",
        "Find the concrete subcontract of project GRB-110 in the database.",
    ):
        prompt = (
            "Reply as 'Thought: <one line>' then 'Answer: <answer>', or 'Action: <tool>' and "
            f"'Action Input: <json>'. Tools: {', '.join(tools)}. {question}"
        )
        replies = []
        # the first reply puts the prompt in the KV cache, so the two compared start alike (a
        # prompt evaluated in one batch and one taken from the cache can differ in a last bit)
        for full in (True, True, False):
            check = llm.full_grammar_check() if full else contextlib.nullcontext()  # type: ignore[attr-defined]
            with check:
                grammar = LlamaGrammar.from_string(gbnf, verbose=False)
                replies.append(llm.complete(prompt, grammar=grammar).text)
        assert replies[2] == replies[1], replies
        assert replies[1].startswith("Thought:"), replies
        assert "Answer:" in replies[1] or "Action Input: {" in replies[1], replies
    assert counts.first > counts.full, counts


def test_a_held_action_ends_at_its_input() -> None:
    """Where the free model ends an action's input with a line break (and would go on to the
    "Observation:" it is stopped at), the held reply ends there too: before the grammar allowed
    that line break, the model added made-up arguments until the token cap."""
    import json

    from llama_cpp import LlamaGrammar

    from toolrag.agent.step_grammar import react_step_gbnf
    from toolrag.models import make_llm

    llm = make_llm(Settings(llm_provider="local"))
    tools = ["run_sql", "search_blueprints", "get_project_schedule"]
    prompt = (
        "You answer with tools: run_sql(sql), search_blueprints(query, project, discipline, "
        "start_date, end_date), get_project_schedule(project).\nReply in this format:\n"
        "Thought: <one line>\nAction: <tool>\nAction Input: <JSON object>\n"
        "Observation: <the tool's result, given to you>\n... and when you know: "
        "Thought: <one line>\nAnswer: <answer>\n\nQuestion: Which structural sheets for "
        "project GRB-107 were revised between 2026-01-01 and 2026-03-31?"
    )
    grammar = LlamaGrammar.from_string(react_step_gbnf(tools), verbose=False)
    reply = llm.complete(prompt, grammar=grammar)
    assert "\nAction: search_blueprints\nAction Input: {" in reply.text, reply.text
    arguments = json.loads(reply.text.split("Action Input:", 1)[1])
    assert set(arguments) <= {"query", "project", "discipline", "start_date", "end_date"}
    assert reply.raw["usage"]["completion_tokens"] < llm.metadata.num_output, reply.text


def test_a_reply_that_copies_its_prompt_keeps_drafted_tokens() -> None:
    """With ``local_draft_tokens`` > 0 the local model drafts tokens from the prompt
    (``prompt_lookup``) and checks them with the written token in one evaluation: a reply that
    copies from its prompt takes fewer evaluations than it has tokens, and copies what it was
    given. (Not compared token for token with a reply written without drafts: a batch's kernels
    round otherwise than one token's, and near-ties can go the other way, decision 0065.)"""
    from toolrag.models import make_llm
    from toolrag.models.prompt_lookup import draft_from_prompt

    llm: Any = make_llm(Settings(llm_provider="local"))
    assert llm.draft_counts is None, "drafts are off by default"
    # what LocalLlamaCPP(draft_tokens=4) installs, on the model the other tests share
    counts = draft_from_prompt(llm._model, 4).counts
    prompt = (
        'Results: [{"sheet": "S-201", "title": "Second Floor Framing Plan", '
        '"revised": "2026-02-14"}, {"sheet": "S-305", "title": "Roof Framing '
        'Details", "revised": "2026-03-02"}]\nList each sheet with its title and its '
        "revision date, one per line."
    )
    try:
        with llm.without_drafts():
            alone = llm.complete(prompt)
        evaluations, drafted = counts.evaluations, counts.drafted
        reply = llm.complete(prompt)
    finally:
        llm._model.draft_model = None  # the model is shared: back to one token at a time
    written = reply.raw["usage"]["completion_tokens"]
    assert counts.drafted > drafted
    assert counts.evaluations - evaluations < written, (counts, written)
    for text in (alone.text, reply.text):
        assert "S-305" in text and "Roof Framing Details" in text and "2026-03-02" in text, text


def test_weights_loaded_as_stored_still_answer() -> None:
    """``local_repacked_weights=False`` loads the local model without llama.cpp's repacked
    weight layouts (decision 0066): another load of the same GGUF, which still writes."""
    from toolrag.models import make_llm

    llm: Any = make_llm(
        Settings(llm_provider="local", local_repacked_weights=False, context_window=4096)
    )
    reply = llm.complete("Reply with the one word: hello")
    assert "hello" in reply.text.lower(), reply.text
