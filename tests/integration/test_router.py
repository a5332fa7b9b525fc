"""The few-shot router: parsing, validation and the repair round, dynamic example selection,
the leakage refusal, and parallel execution through the guard (scripted LLM)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from llama_index.core.tools import BaseTool

from toolrag import ScriptedLLM, Settings, Toolbox
from toolrag.batch.questions import load_questions
from toolrag.guard.grounding.names import masked
from toolrag.guard.grounding.values import code_like
from toolrag.models.embeddings import make_embedding
from toolrag.routing import Example, ExampleStore, LeakageError, Router, ToolCallSpec
from toolrag.routing.call_schema import decision_schema
from toolrag.routing.router import _valid_call, extract_json

SCHEDULE = "get_project_schedule"


def _decision(*calls: tuple[str, dict[str, object]], action: str = "call_tools") -> str:
    body = {"action": action, "calls": [{"tool": t, "arguments": a} for t, a in calls]}
    return json.dumps(body)


@pytest.fixture
def store(tmp_path: Path) -> ExampleStore:
    return ExampleStore(tmp_path / "examples.sqlite", make_embedding(Settings()))


def test_extract_json_finds_the_object_in_chatter() -> None:
    reply = 'Sure!\n```json\n{"action": "answer_directly", "message": "a {brace} \\" inside"}\n```'
    assert extract_json(reply) == {"action": "answer_directly", "message": 'a {brace} " inside'}
    assert extract_json("no json here") is None


def test_a_bad_decision_gets_one_repair_round_with_the_errors(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() in (SCHEDULE, "search_documents")]
    llm = ScriptedLLM(
        [
            _decision(("get_schedule", {"project": "GRB-104"})),  # a made-up tool name
            _decision((SCHEDULE, {"project": "GRB-104", "colour": "red"})),  # unknown argument
            _decision((SCHEDULE, {"project": "GRB-104"})),
        ]
    )
    result = Router(llm, max_repairs=1).route("When does GRB-104 finish?", tools)
    assert result.repaired and not result.valid  # one repair only: the 2nd reply still bad
    assert any("has no argument 'colour'" in e for e in result.errors)
    repair_prompt = llm.prompts[1][0].content or ""
    assert "'get_schedule' is not an offered tool" in repair_prompt
    assert "get_project_schedule" in repair_prompt

    good = Router(ScriptedLLM([_decision((SCHEDULE, {"projec": "x"})),
                               _decision((SCHEDULE, {"project": "GRB-104"}))]))  # fmt: skip
    fixed = good.route("When does GRB-104 finish?", tools)
    assert fixed.valid and fixed.repaired and fixed.tools_called == [SCHEDULE]
    assert fixed.decision is not None and fixed.decision.calls[0].arguments == {
        "project": "GRB-104"
    }


def test_no_tool_and_clarification_decisions_are_valid(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tools = toolbox_factory([]).tools()
    reply = json.dumps({"action": "answer_directly", "calls": [], "message": "Hello!"})
    result = Router(ScriptedLLM([reply])).route("hi there", tools)
    assert result.valid and result.decision is not None and result.tools_called == []
    vague = json.dumps({"action": "ask_clarification", "message": "Which project?"})
    assert Router(ScriptedLLM([vague])).route("how late is it", tools).valid


def test_dynamic_examples_are_the_nearest_ones(store: ExampleStore) -> None:
    store.add_many(
        [
            Example(query="Will it rain in Oslo tomorrow?", calls=[ToolCallSpec(tool="weather")]),
            Example(query="What is 17 times 23?", calls=[ToolCallSpec(tool="calculator")]),
            Example(query="Email the report to Ann", calls=[ToolCallSpec(tool="send_email")]),
            Example(query="Is it going to snow in Bergen?", calls=[ToolCallSpec(tool="weather")]),
        ]
    )
    picked = store.select("Should I take an umbrella in Paris today?", k=2)
    assert [e.tools for _, e, _ in picked] == [{"weather"}, {"weather"}]
    only_math = store.select("Should I take an umbrella in Paris today?", k=2, tools=["calculator"])
    assert [e.query for _, e, _ in only_math] == ["What is 17 times 23?"]  # offered tools only
    router = Router(ScriptedLLM([]), store, mode="dynamic", k_examples=2)
    chosen = [e.query for _, e in router.choose_examples("umbrella in Paris?", ["weather"])]
    assert set(chosen) == {"Will it rain in Oslo tomorrow?", "Is it going to snow in Bergen?"}
    assert router.choose_examples("umbrella", ["weather"]) != []
    assert Router(ScriptedLLM([]), store, mode="none").choose_examples("x", ["weather"]) == []


def test_examples_are_chosen_by_the_shape_of_the_request_then_by_its_names(
    store: ExampleStore, tmp_path: Path
) -> None:
    assert masked("Which cost code is over budget on the Summit Ridge Hotel, and by how much?") == (
        "Which cost code is over budget on the Name, and by how much?"
    )
    assert masked("Has RFI-107-031 been answered?") == "Has ID been answered?"
    over_budget = "On GRB-103, which budget line has actual costs exceeding its budget?"
    same_project = [
        ("What insurance limits does the Summit Ridge Hotel prime contract require?", "docs"),
        ("How many safety incidents has the Summit Ridge Hotel had this year?", "site"),
        ("Which RFIs are still open on the Summit Ridge Hotel?", "rfis"),
        ("When did the Summit Ridge Hotel finish excavation?", "schedule"),
    ]
    store.add_many(
        [Example(query=over_budget, calls=[ToolCallSpec(tool="run_sql")])]
        + [Example(query=q, calls=[ToolCallSpec(tool=t)]) for q, t in same_project]
    )
    question = "Which cost code is over budget on the Summit Ridge Hotel, and by how much?"
    # the whole question's nearest examples are the ones naming its project ...
    by_query = [e.query for _, e, _ in store.select(question, k=2, k_named=2)]
    assert over_budget not in by_query
    assert all("Summit Ridge Hotel" in q for q in by_query)
    # ... its shape's nearest is the same kind of request, about another project; the rest of
    # the k come from the whole question
    picked = [e.query for _, e, _ in store.select(question, k=3, k_named=2)]
    assert picked[0] == over_budget
    assert all("Summit Ridge Hotel" in q for q in picked[1:])
    # the router shows the nearest by shape last, beside the question
    router = Router(ScriptedLLM([]), store, mode="dynamic", k_examples=3)
    chosen = router.choose_examples(question, ["run_sql", "docs", "site", "rfis", "schedule"])
    assert chosen[-1][1].query == over_budget
    # a store written before shapes were kept gets them when it is opened
    with store._conn:
        store._conn.execute("UPDATE examples SET shape = NULL")
    reopened = ExampleStore(store.path, store.embed)
    assert [e.query for _, e, _ in reopened.select(question, k=3, k_named=2)] == picked


def test_a_question_of_two_parts_gets_examples_for_each_part(store: ExampleStore) -> None:
    sql, plan = ToolCallSpec(tool="run_sql"), ToolCallSpec(tool="schedule")
    same_project = [
        ("How many workers are on site at Harbor Point today?", "site"),
        ("What phase is Harbor Point in right now?", "site"),
        ("Who is the superintendent at Harbor Point?", "site"),
        ("Is Harbor Point on site today?", "site"),
    ]
    store.add_many(
        [Example(query=q, calls=[ToolCallSpec(tool=t)]) for q, t in same_project]
        + [
            Example(query="What was the total of paid invoices in May?", calls=[sql]),
            Example(query="When is the roof planned to be finished at Oak Hollow?", calls=[plan]),
        ]
    )
    question = (
        "What is the total of paid invoices on Harbor Point, and when is drywall planned to "
        "be finished at Harbor Point?"
    )
    tools = ["site", "run_sql", "schedule"]
    router = Router(ScriptedLLM([]), store, mode="dynamic", k_examples=4)
    chosen = router.choose_examples(question, tools)
    by_tool = [sorted(e.tools)[0] for _, e in chosen]
    assert "run_sql" in by_tool[:2] and "schedule" in by_tool[2:]  # part by part, in order
    assert len({i for i, _ in chosen}) == len(chosen) <= 4


def test_examples_close_to_a_test_question_are_refused(store: ExampleStore) -> None:
    store.register_test_questions([("t1", "When is substantial completion for the hotel?")])
    with pytest.raises(LeakageError, match="cosine"):
        store.add(Example(query="When is substantial completion for the hotel?"))
    added, refused = store.add_many(
        [
            Example(query="What is the substantial completion date of the hotel?"),
            Example(query="List the open RFIs on the parking garage"),
        ],
        strict=False,
    )
    assert added == 1 and len(refused) == 1 and "t1" in refused[0]
    assert len(store) == 1


def test_run_executes_independent_calls_through_the_guard(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([])
    llm = ScriptedLLM(
        [_decision((SCHEDULE, {"project": "GRB-104"}), (SCHEDULE, {"project": "GRB-101"}))]
    )
    result = asyncio.run(Router(llm).arun("Compare GRB-104 with GRB-101", tb.tools(), tb.guard))
    assert result.valid and [r.success for r in result.results] == [True, True]
    assert {r.sources[0].file for r in result.results} == {
        "schedules/GRB-104.csv",
        "schedules/GRB-101.csv",
    }


def test_examples_show_a_whole_call_only_when_it_is_valid(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tools = [
        t
        for t in toolbox_factory([]).tools()
        if t.metadata.get_name() in (SCHEDULE, "search_documents")
    ]
    examples = [
        Example(
            query="When does GRB-104 finish?",
            calls=[ToolCallSpec(tool=SCHEDULE, arguments={"project": "GRB-104"})],
        ),
        # a card's example query: the tool is known, its arguments are not
        Example(query="Show the Harbor Point milestones", calls=[ToolCallSpec(tool=SCHEDULE)]),
        # expected arguments outside the tool's schema (not a document type)
        Example(
            query="What retainage does the GRB-103 contract hold?",
            calls=[ToolCallSpec(tool="search_documents", arguments={"document_type": "memo"})],
        ),
        Example(query="Hello!"),  # no tool: the direct answer is a whole reply
    ]
    prompt = Router(ScriptedLLM([])).prompt("When is GRB-101 done?", tools, examples)
    shown = prompt.split("Examples:\n", 1)[1]
    assert (
        'Question: When does GRB-104 finish?\nJSON: {"action":"call_tools","calls":[{"tool":'
        '"get_project_schedule","arguments":{"project":"GRB-104"}}]' in shown
    )
    assert f"Question: Show the Harbor Point milestones\nTools: {SCHEDULE}\n" in shown
    retainage = "Question: What retainage does the GRB-103 contract hold?"
    assert f"{retainage}\nTools: search_documents\n" in shown
    assert 'Question: Hello!\nJSON: {"action":"answer_directly"' in shown
    assert shown.count("JSON: {") == 2  # the two valid ones; the last "JSON:" is the question's
    # the whole replies come last, beside the question, each group in the order given: the
    # model writes its reply in the form of the nearest
    order = [shown.index(f"Question: {e.query}\n") for e in examples]
    assert order[1] < order[2] < order[0] < order[3]


def test_the_sample_examples_are_whole_valid_calls(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """Every one-tool example in data/questions/examples.jsonl is shown as a whole call: its
    arguments fit the tool (a missing required argument would make it a tools-only line)."""
    tools = {t.metadata.get_name(): t for t in toolbox_factory([]).tools()}
    examples = load_questions(Path(__file__).parents[2] / "data/questions/examples.jsonl")
    bad = [
        (q.id, q.expected_args)
        for q in examples
        if len(q.expected_tools) == 1
        and not _valid_call(
            0, ToolCallSpec(tool=q.expected_tools[0], arguments=q.expected_args), tools
        )
    ]
    assert not bad


def _repaired_to(
    store: ExampleStore, tools: list[BaseTool], question: str, bad: str, good: str
) -> str:
    """Route ``question`` with a first reply whose project is ``bad`` and a repaired one with
    ``good``; check the repair took, and return the repair prompt."""
    llm = ScriptedLLM([_decision((SCHEDULE, {"project": bad})),
                       _decision((SCHEDULE, {"project": good}))])  # fmt: skip
    result = Router(llm, store, mode="dynamic").route(question, tools)
    assert result.valid and result.repaired
    assert result.decision is not None and result.decision.calls[0].arguments["project"] == good
    return llm.prompts[1][0].content or ""


def test_an_id_copied_from_an_example_question_gets_the_repair_round(
    toolbox_factory: Callable[..., Toolbox], store: ExampleStore
) -> None:
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() == SCHEDULE]
    store.add_many(
        [
            Example(  # known only by its tool: shown without arguments
                query="Which milestones are running late on GRB-107?",
                calls=[ToolCallSpec(tool=SCHEDULE)],
            ),
            Example(  # a name mapped to a code: the code is not in the example's question
                query="When is the Riverside Medical Office Building finished?",
                calls=[ToolCallSpec(tool=SCHEDULE, arguments={"project": "GRB-101"})],
            ),
            Example(query="Is GRB-101 behind schedule?", calls=[ToolCallSpec(tool=SCHEDULE)]),
        ]
    )
    # the question holds one id of the same shape: it is put back without a model call
    question = "When is substantial completion for GRB-104?"
    llm = ScriptedLLM([_decision((SCHEDULE, {"project": "GRB-107"}))])
    result = Router(llm, store, mode="dynamic").route(question, tools)
    assert result.valid and not result.repaired and len(llm.prompts) == 1
    assert result.decision is not None
    assert result.decision.calls[0].arguments["project"] == "GRB-104"
    assert result.grounded == ["get_project_schedule.project: 'GRB-107' -> 'GRB-104'"]
    # a reply the repair round replaced leaves no note: the notes describe the decision kept
    bad = _decision((SCHEDULE, {"project": "GRB-107", "colour": "red"}))
    llm = ScriptedLLM([bad, _decision((SCHEDULE, {"project": "GRB-104"}))])
    result = Router(llm, store, mode="dynamic").route(question, tools)
    assert result.valid and result.repaired and result.grounded == []
    # no id in the question: the repair round, told where the value came from
    question = "When is substantial completion for the Cedar Valley fire station?"
    repair_prompt = _repaired_to(store, tools, question, "GRB-107", "Cedar Valley Fire Station 7")
    assert "'GRB-107' is copied from the example question" in repair_prompt
    # a code an example maps from a name (though another example's question spells it), or
    # one this question contains, is left alone
    mapped = Router(ScriptedLLM([_decision((SCHEDULE, {"project": "GRB-101"}))]), store)
    kept = mapped.route("When is the Riverside MOB finished?", tools)
    assert kept.valid and not kept.repaired
    same = Router(ScriptedLLM([_decision((SCHEDULE, {"project": "GRB-107"}))]), store)
    assert same.route("Is GRB-107 late?", tools).valid


def test_a_code_the_question_does_not_give_gets_the_repair_round(
    toolbox_factory: Callable[..., Toolbox], store: ExampleStore
) -> None:
    """The local model wrote GRB-107 (the code in the parameter's description) for "the
    Riverside Medical Office Building" (GRB-101). A code no example maps from a name the
    question uses is sent back; the name, a date written from words, or a code the question
    spells is kept."""
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() in (SCHEDULE, "list_inspections")]
    store.add(
        Example(  # maps Summit Ridge Hotel to its code: no name shared with the question below
            query="When does the Summit Ridge Hotel top out?",
            calls=[ToolCallSpec(tool=SCHEDULE, arguments={"project": "GRB-107"})],
        )
    )
    name = "Riverside Medical Office Building"
    question = f"What is the planned substantial completion date for the {name}?"
    repair_prompt = _repaired_to(store, tools, question, "GRB-107", name)
    assert "'GRB-107' is not in the question" in repair_prompt
    # another project's name (the one in the parameter's description) is sent back too
    repair_prompt = _repaired_to(store, tools, question, "Summit Ridge Hotel", "Riverside")
    assert "'Summit Ridge Hotel' is copied from the example question" in repair_prompt
    assert f"this question gives {name!r}" in repair_prompt  # the value to write instead
    # still ungrounded after the repair round: an optional argument is left out, the call runs
    invented = _decision(("list_inspections", {"project": "GRB-104", "result": "failed"}))
    llm = ScriptedLLM([invented, invented])
    wide = Router(llm, store).route("Which inspections failed in December?", tools)
    assert wide.valid and wide.repaired and wide.decision is not None
    assert wide.decision.calls[0].arguments == {"result": "failed"}
    assert wide.grounded == ["list_inspections.project: 'GRB-104' left out"]
    # a code a tool's parameter description pairs with the name the question uses is grounded
    # (list_inspections: "Project code (GRB-101) or name (Riverside Medical Office Building)");
    # another project's code is not, nor is that code for another project
    paired = _decision(("list_inspections", {"project": "GRB-101"}))
    riverside = "Which inspections failed at the Riverside Medical Office Building?"
    kept = Router(ScriptedLLM([paired]), store).route(riverside, tools)
    assert kept.valid and not kept.repaired
    other = _decision(("list_inspections", {"project": "GRB-103"}))
    sent_back = Router(ScriptedLLM([other, paired]), store).route(riverside, tools)
    assert sent_back.repaired and sent_back.valid
    harbor = _decision((SCHEDULE, {"project": "GRB-101"}))
    wrong = Router(ScriptedLLM([harbor, harbor]), store).route(
        "When does the Harbor Point job finish?", tools
    )
    assert wrong.repaired and wrong.grounded == [f"{SCHEDULE}.project: 'GRB-101' left out"]
    # a required one is not: the decision stays invalid (the agent falls back to plain ReAct)
    sql = [t for t in tb.tools() if t.metadata.get_name() == "run_sql"]
    guessed = "SELECT planned_finish FROM milestones WHERE project_code = 'GRB-104'"
    llm = ScriptedLLM([_decision(("run_sql", {"sql": guessed}))] * 2)
    assert not Router(llm, store).route("When does the school finish?", sql).valid
    # dates written from words, enum values and codes the question spells are grounded
    dated = _decision(
        ("list_inspections", {"project": "GRB-103", "since": "2025-12-01", "result": "failed"})
    )
    ok = Router(ScriptedLLM([dated]), store).route(
        "Which inspections failed on GRB-103 in December 2025?", tools
    )
    assert ok.valid and not ok.repaired
    # numbers, URLs, schema defaults and names the prompt never showed are the model's own
    assert not any(code_like(v) for v in ("1e-09", "8.854e-12", "https://h/v1/x2", "10mg"))
    own = _decision(("list_inspections", {"project": "Los Angeles Union Station"}))
    assert Router(ScriptedLLM([own]), store).route("Any inspections in LA?", tools).valid
    # the same code for a question about the hotel: the example maps it from that name
    hotel = Router(ScriptedLLM([_decision((SCHEDULE, {"project": "GRB-107"}))]), store)
    assert hotel.route("When is the hotel's final completion?", tools).valid


def test_an_id_inside_a_sql_statement_is_grounded_like_a_whole_value(
    toolbox_factory: Callable[..., Toolbox], store: ExampleStore
) -> None:
    """The local model copied the example's project code into its SQL ("... project_code =
    'GRB-109'" for a question about the Summit Ridge Hotel) and the query read another
    project's invoices. An id inside a longer value is checked like a whole one."""
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() == "run_sql"]
    copied = "SELECT SUM(amount) FROM invoices WHERE project_code = 'GRB-109' AND status = 'paid'"
    store.add(
        Example(
            query="What is the total of paid invoices on GRB-109?",
            calls=[ToolCallSpec(tool="run_sql", arguments={"sql": copied})],
        )
    )
    # the question holds one id of the same shape: put back inside the statement
    question = "What is the total of paid invoices on GRB-107?"
    result = Router(ScriptedLLM([_decision(("run_sql", {"sql": copied}))]), store).route(
        question, tools
    )
    assert result.valid and not result.repaired and result.decision is not None
    assert result.decision.calls[0].arguments["sql"] == copied.replace("GRB-109", "GRB-107")
    assert result.grounded == ["run_sql.sql: 'GRB-109' -> 'GRB-107'"]
    # the question names the project: the repair round, which repeats the question last
    question = "What is the total of paid invoices on the Summit Ridge Hotel?"
    joined = (
        "SELECT SUM(i.amount) FROM invoices i JOIN projects p ON p.code = i.project_code "
        "WHERE p.name = 'Summit Ridge Hotel' AND i.status = 'paid'"
    )
    llm = ScriptedLLM(
        [_decision(("run_sql", {"sql": copied})), _decision(("run_sql", {"sql": joined}))]
    )
    fixed = Router(llm, store).route(question, tools)
    assert fixed.valid and fixed.repaired
    repair_prompt = llm.prompts[1][0].content or ""
    assert "calls[0].arguments.sql: 'GRB-109' is copied from the example question" in repair_prompt
    assert repair_prompt.rstrip().endswith(f"Question: {question}\nJSON:")
    # ids the question spells, and statements without ids, pass as they are
    spelled = "SELECT amount FROM invoices WHERE invoice_no = 'INV-V07-2025-0294'"
    asked = "How much was invoice INV-V07-2025-0294?"
    assert Router(ScriptedLLM([_decision(("run_sql", {"sql": spelled}))])).route(asked, tools).valid


def test_with_no_tool_offered_the_model_answers_without_routing() -> None:
    llm = ScriptedLLM(["Paris is the capital of France."])
    result = Router(llm).route("What is the capital of France?", [])
    assert result.valid and result.decision is not None and result.tools_called == []
    assert result.decision.action == "answer_directly"
    assert result.decision.message == "Paris is the capital of France."
    seen = llm.prompts[0][-1].content or ""
    assert "No tool fits this question" in seen and '"action"' not in seen  # no routing prompt
    assert len(llm.prompts) == 1 and result.tools_offered == []


MULTI = (
    "What is the total of approved change orders on GRB-106, and when is substantial "
    "completion planned there?"
)


def test_a_question_of_several_parts_gets_them_listed_and_a_call_for_each(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() in ("run_sql", SCHEDULE)]
    sql = {"sql": "SELECT SUM(amount) FROM change_orders WHERE project_code = 'GRB-106'"}
    llm = ScriptedLLM([_decision(("run_sql", sql), (SCHEDULE, {"project": "GRB-106"}))])
    result = Router(llm).route(MULTI, tools)
    prompt = llm.prompts[0][0].content or ""
    assert "This question asks 2 things; give a call for each:\n1. What is the total" in prompt
    assert prompt.index("Question: What is the total") < prompt.index("This question asks 2")
    assert result.valid and [c.tool for c in result.decision.calls] == [  # type: ignore[union-attr]
        "run_sql",
        SCHEDULE,
    ]
    # the grammar (or the server's JSON schema) admits only that many calls or more
    schema = decision_schema(2)
    assert schema["properties"]["calls"]["minItems"] == 2
    assert schema["properties"]["action"]["enum"] == ["call_tools"]
    assert "minItems" not in decision_schema(1)["properties"]["calls"]
    # a question of one part: no list
    Router(one := ScriptedLLM([_decision(("run_sql", sql))])).route(
        "Total of the approved COs on GRB-106?", tools
    )
    assert "things; give a call" not in (one.prompts[0][0].content or "")


def test_a_call_still_wrong_after_the_repair_is_left_out_when_another_is_right(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() in ("run_sql", SCHEDULE)]
    sql = {"sql": "SELECT SUM(amount) FROM change_orders WHERE project_code = 'GRB-106'"}
    bad = _decision(("run_sql", sql), (SCHEDULE, {"colour": "red"}))
    result = Router(ScriptedLLM([bad, bad])).route(MULTI, tools)
    assert result.valid and result.repaired
    assert [c.tool for c in result.decision.calls] == ["run_sql"]  # type: ignore[union-attr]
    assert any(f"{SCHEDULE} left out" in note for note in result.grounded)
    # a question of one part keeps the old rule: a decision still wrong is not valid
    single = Router(ScriptedLLM([bad, bad])).route("Total of approved COs on GRB-106?", tools)
    assert not single.valid


def test_a_repeated_call_runs_once(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() == SCHEDULE]
    twice = _decision((SCHEDULE, {"project": "GRB-104"}), (SCHEDULE, {"project": "GRB-104"}))
    result = Router(ScriptedLLM([twice])).route("When does GRB-104 finish?", tools)
    assert result.valid and len(result.decision.calls) == 1  # type: ignore[union-attr]
    assert result.grounded == ["get_project_schedule: a repeated call left out"]


def test_an_id_the_question_gives_by_name_replaces_a_copied_one(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory([])
    tools = [t for t in tb.tools() if t.metadata.get_name() == SCHEDULE]
    router = Router(
        ScriptedLLM([_decision((SCHEDULE, {"project": "GRB-101"}))]),
        vocabulary=tb.guard.vocabulary,
    )
    question = "When is the Lakeshore Public Library Renovation planned to finish?"
    assert router.named_ids(question) == ["GRB-106"]  # the sample's alias file names it
    result = router.route(question, tools)
    assert result.valid and not result.repaired
    assert result.decision.calls[0].arguments == {"project": "GRB-106"}  # type: ignore[union-attr]
    assert result.grounded == ["get_project_schedule.project: 'GRB-101' -> 'GRB-106'"]


def test_a_tool_with_no_examples_of_its_own_gets_its_written_requests(
    store: ExampleStore, tmp_path: Path
) -> None:
    """A user's pool: the SQL tool has no example, only requests the LLM wrote for it, and a
    folder's search has placeholder examples; both tools get examples, so the router is not
    shown the search's alone for a question about orders."""
    from toolrag.cards.card import ToolCard

    questions = tmp_path / "examples.jsonl"
    questions.write_text(
        json.dumps({"query": "Which site is busiest?", "expected_tools": ["site"]}) + "\n"
    )
    cards = [
        ToolCard(
            name="run_sql",
            description="Run one SQL SELECT on the shop database.",
            synthetic=["Which customer spent the most?", "How many orders were placed in May?"],
        ),
        ToolCard(
            name="search_handbook",
            description="Search the handbook.",
            examples=["Find leave policy in the handbook"],
            synthetic=["How many days of leave do I get?"],
        ),
        ToolCard(name="site", description="The site today.", synthetic=["Who is on site?"]),
    ]
    store.seed(cards, questions)
    by_tool: dict[str, list[tuple[str, str]]] = {}
    for e in store._examples:
        by_tool.setdefault(next(iter(e.tools)), []).append((e.query, e.source))
    assert sorted(by_tool["run_sql"]) == [
        ("How many orders were placed in May?", "written"),
        ("Which customer spent the most?", "written"),
    ]
    # a tool with examples of its own (a card's, a question's) keeps only those
    assert by_tool["search_handbook"] == [("Find leave policy in the handbook", "card")]
    assert by_tool["site"] == [("Which site is busiest?", "questions")]
    chosen = store.select("Which customer placed the largest order?", k=2, k_named=0)
    assert next(iter(chosen[0][1].tools)) == "run_sql"
