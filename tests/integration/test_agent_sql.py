"""The SQL tools inside the toolbox: every sample SQL question's reference query runs through
the guard and yields the expected answer, and the agent answers a database question with a
run_sql call in its trace (the scripted LLM writes the SQL, reads the observation, answers)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import yaml
from llama_index.core.llms import ChatMessage

from toolrag import ScriptedLLM, Settings, Toolbox
from toolrag.batch.questions import Question, answer_matches, load_questions
from toolrag.errors import InputError
from toolrag.tools.result import ToolResult

from ..conftest import DATA, REPO, final, react

SQL_QUESTIONS = [
    q
    for name in ("examples", "test")
    for q in load_questions(DATA / "questions" / f"{name}.jsonl")
    if q.expected_sql
]


def test_there_are_sql_questions() -> None:
    assert len(SQL_QUESTIONS) >= 10
    assert all(q.expected_tools == ["run_sql"] and q.answer_keywords for q in SQL_QUESTIONS)


@pytest.mark.parametrize("question", SQL_QUESTIONS, ids=[q.id for q in SQL_QUESTIONS])
def test_reference_sql_gives_the_expected_answer(
    toolbox_factory: Callable[..., Toolbox], question: Question
) -> None:
    tb = toolbox_factory([])
    out = tb.tool("run_sql")(sql=question.expected_sql).raw_output
    assert isinstance(out, ToolResult) and out.success, out
    assert answer_matches(json.dumps(out.data["rows"]), question.answer_keywords), (
        question.answer_keywords,
        out.data["rows"],
    )


def _answer_from_observation(messages: Sequence[ChatMessage]) -> str:
    """The model's last turn: copy the figure the observation shows (large figures come
    grouped, "2,413,500") into the answer."""
    observation = next(m.content for m in reversed(messages) if "Observation:" in (m.content or ""))
    payload = json.loads(re.search(r"\{.*\}", observation or "", re.S).group(0))  # type: ignore[union-attr]
    value = payload["data"]["rows"][0][0]
    assert isinstance(value, str) and re.fullmatch(r"\d{1,3}(,\d{3})+", value), value
    return f"Thought: I can answer.\nAnswer: The total is ${value}."


def test_agent_answers_a_database_question(toolbox_factory: Callable[..., Toolbox]) -> None:
    question = next(q for q in SQL_QUESTIONS if q.id == "sql-001")
    tb = toolbox_factory(
        [react("run_sql", {"sql": question.expected_sql}), _answer_from_observation]
    )
    answer = tb.ask(question.query)
    assert "run_sql" in answer.tools_offered
    assert answer.tools_called == ["run_sql"] and answer.trace[0].success
    assert answer.trace[0].arguments["sql"] == question.expected_sql
    assert answer_matches(answer.answer, question.answer_keywords), answer.answer
    assert any("sqlite" in s.file for s in answer.sources)


def test_agent_recovers_from_a_refused_write(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory(
        [
            react("run_sql", {"sql": "UPDATE invoices SET status = 'paid'"}),
            react("run_sql", {"sql": "SELECT COUNT(*) FROM invoices WHERE status = 'disputed'"}),
            "Thought: done.\nAnswer: I cannot change invoices; I only read them.",
        ]
    )
    answer = tb.ask("Mark every invoice as paid, then count the disputed ones.")
    assert [s.error_code for s in answer.trace] == ["FORBIDDEN", None]
    assert "read-only" in answer.trace[0].observation


def test_text_to_sql_tool_runs_through_the_guard(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    sql = "SELECT SUM(amount) FROM invoices WHERE status = 'disputed'"
    tb = toolbox_factory([f"SQLQuery: {sql}\nSQLResult:", "The disputed invoices total $220,765."])
    tool = next(t for t in tb.tools(include_qa=True) if t.metadata.name == "query_construction")
    out = tool(question="What is the total of disputed invoices?").raw_output
    assert isinstance(out, ToolResult) and out.success, out
    assert out.data["sql"] == sql and out.data["rows"] == [[220765.0]]
    assert "220,765" in out.data["answer"]
    # the same guard refuses a write the model writes
    tb = toolbox_factory(["SQLQuery: DELETE FROM invoices\nSQLResult:", "Done."])
    tool = next(t for t in tb.tools(include_qa=True) if t.metadata.name == "query_construction")
    refused = tool(question="Delete the invoices").raw_output
    assert isinstance(refused, ToolResult) and not refused.success
    assert "Only SELECT" in (refused.error_message or "")


def test_relayed_error_gets_one_repair_turn(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory(
        [
            react("run_sql", {"sql": "SELECT COUNT(*) FROM projectz"}),
            "Thought: I can answer.\nAnswer: The table 'projectz' is not in this database.",
            react("run_sql", {"sql": "SELECT COUNT(*) FROM projects"}),
            final("There are 12 projects."),
        ]
    )
    answer = tb.ask("How many projects are there?")
    assert answer.repairs == 1
    assert [s.error_code for s in answer.trace] == ["NOT_FOUND", None]
    assert answer.answer == "There are 12 projects."
    # the repair turn showed the model what went wrong and the question again
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "Do not stop here" in prompt
    assert "How many projects are there?" in prompt


def test_giving_up_after_an_error_gets_one_repair_turn_only(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    bad = react("run_sql", {"sql": "SELECT COUNT(*) FROM projectz"})
    worse = react("run_sql", {"sql": "SELECT COUNT(*) FROM projectzz"})
    tb = toolbox_factory([bad, final("I could not count."), worse, final("Still no count.")])
    answer = tb.ask("How many projects are there?")
    assert answer.repairs == 1 and answer.answer == "Still no count."


def test_an_answer_after_a_successful_call_is_not_repaired(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory(
        [react("run_sql", {"sql": "SELECT COUNT(*) FROM projects"}), final("There are 12.")]
    )
    answer = tb.ask("How many projects are there?")
    assert answer.repairs == 0 and answer.answer == "There are 12."


def test_an_only_call_that_found_nothing_gets_one_more_turn(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    empty = react("run_sql", {"sql": "SELECT name FROM projects WHERE name = 'Nowhere'"})
    good = react("run_sql", {"sql": "SELECT COUNT(*) FROM projects"})
    tb = toolbox_factory([empty, final("Nothing found."), good, final("There are 12.")])
    answer = tb.ask("How many projects are there?")
    assert answer.trace[0].empty and not answer.trace[1].empty
    assert answer.repairs == 1 and answer.answer == "There are 12."
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "The last tool found nothing" in prompt


def test_nothing_found_after_other_calls_is_an_answer(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    count = react("run_sql", {"sql": "SELECT COUNT(*) FROM projects"})
    empty = react("run_sql", {"sql": "SELECT name FROM projects WHERE name = 'Nowhere'"})
    tb = toolbox_factory([count, empty, final("There is no project Nowhere.")])
    answer = tb.ask("Is there a project called Nowhere?")
    assert [s.empty for s in answer.trace] == [False, True]
    assert answer.repairs == 0 and answer.answer == "There is no project Nowhere."


def test_a_database_only_toolbox_needs_no_content_index(
    construction_sqlite: Path, tmp_path: Path
) -> None:
    specs = tmp_path / "toolspecs"
    specs.mkdir()
    (specs / "sql.yaml").write_text("name: construction\nexpose: [run_sql]\n")
    settings = Settings(
        data_dir=DATA,
        index_dir=tmp_path / "indexes",  # empty: nothing was indexed
        llm_provider="scripted",
        database_url=f"sqlite:///{construction_sqlite}",
        toolspecs_dir=specs,
        compute_tools=False,  # the database alone (the compute tools join any other tool)
    )
    turns = [react("run_sql", {"sql": "SELECT COUNT(*) FROM projects"}), final("There are 12.")]
    tb = Toolbox(settings, llm=ScriptedLLM(turns))
    assert [t.metadata.name for t in tb.tools()] == ["run_sql"]
    answer = tb.ask("How many projects are there?")
    assert answer.tools_called == ["run_sql"] and answer.trace[0].success
    assert answer.tools_offered == ["run_sql"]


def test_the_collections_file_chooses_the_content_tools(
    sample_settings: Settings, tmp_path: Path
) -> None:
    spec = yaml.safe_load((REPO / "toolspecs" / "collections.yaml").read_text())
    spec["collections"] = [c for c in spec["collections"] if c["name"] == "schedules"]
    (tmp_path / "only-schedules.yaml").write_text(yaml.safe_dump(spec))
    settings = sample_settings.model_copy(
        update={"collections_file": tmp_path / "only-schedules.yaml"}
    )
    names = {t.metadata.name for t in Toolbox(settings).tools()}
    assert "get_project_schedule" in names
    assert not names & {"search_documents", "search_blueprints"}


def test_a_toolbox_without_tools_says_what_to_configure(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=DATA,
        index_dir=tmp_path / "indexes",
        llm_provider="scripted",
        toolspecs_dir=tmp_path,
    )
    with pytest.raises(InputError, match="no tools") as err:
        Toolbox(settings, llm=ScriptedLLM([final("?")])).ask("How many projects are there?")
    assert "collections.yaml" in (err.value.hint or "")


def test_a_repair_turn_without_a_tool_call_keeps_the_first_answer(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    bad = react("run_sql", {"sql": "SELECT COUNT(*) FROM projectz"})
    tb = toolbox_factory([bad, final("I could not count the projects."), final("There are 99.")])
    answer = tb.ask("How many projects are there?")
    assert answer.repairs == 1 and answer.answer == "I could not count the projects."
    repair = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "I could not count the projects." not in repair  # the abandoned answer was cut
    assert "Observation:" in repair and "projectz" in repair


# the model's call that reads the right figure ($6,510,000) for the lump sum questions below
LUMP_SUM_AVERAGE = react(
    "run_sql", {"sql": "SELECT AVG(contract_value) FROM projects WHERE contract_type = 'lump sum'"}
)


def test_an_answer_with_a_figure_no_result_shows_gets_one_more_turn(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    wrong = react(
        "run_sql",
        {"sql": "SELECT AVG(contract_value) FROM projects WHERE project_type = 'lump sum'"},
    )
    right = LUMP_SUM_AVERAGE
    tb = toolbox_factory(
        [wrong, final("The average is $1,200,000."), right, final("It is $6,510,000.")]
    )
    answer = tb.ask("What is the average contract value of the lump sum projects?")
    assert answer.repairs == 1 and answer.answer == "It is $6,510,000."
    assert [s.success for s in answer.trace] == [True, True]
    # the empty result said where 'lump sum' is, and the extra turn named the figure
    assert "projects.contract_type" in answer.trace[0].observation
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "Your answer gives $1,200,000, which no tool result shows" in prompt


def test_a_turn_that_drops_an_unread_figure_replaces_the_answer(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    wrong = react(
        "run_sql", {"sql": "SELECT AVG(contract_value) FROM projects WHERE project_type = 'x'"}
    )
    tb = toolbox_factory(
        [wrong, final("The average is $1,200,000."), final("I could not find the average.")]
    )
    answer = tb.ask("What is the average contract value of the x projects?")
    assert answer.repairs == 1 and answer.answer == "I could not find the average."


def test_a_made_up_figure_given_again_is_replaced_by_the_answer_read_from_the_results(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    right = LUMP_SUM_AVERAGE
    made_up = final("The average is $6,510,000, and $1,250,000 of it is unpaid.")
    tb = toolbox_factory([right, made_up, made_up, "The average contract value is $6,510,000."])
    answer = tb.ask("What is the average contract value of the lump sum projects?")
    assert answer.repairs == 1 and answer.llm_calls == 4
    assert answer.answer == "The average contract value is $6,510,000."
    read = tb.llm.prompts[-1][-1].content or ""  # type: ignore[attr-defined]
    assert "from this tool result only" in read and "6510000" in read.replace(",", "")

    # a read that gives a figure the results lack too is not kept: the model's answer stays
    tb = toolbox_factory([right, made_up, made_up, "It is $7,000,000."])
    answer = tb.ask("What is the average contract value of the lump sum projects?")
    assert answer.answer == "The average is $6,510,000, and $1,250,000 of it is unpaid."


def test_an_answer_with_ids_no_result_shows_gets_one_more_turn(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    """A list padded with ids made up in the pattern of those read (GRB-112) is named back
    to the model, and the answer it gives from the results replaces it."""
    lump_sum = react(
        "run_sql", {"sql": "SELECT code FROM projects WHERE contract_type = 'lump sum'"}
    )
    padded = final("GRB-102, GRB-104, GRB-106, GRB-108, GRB-110 and GRB-112.")
    read = "GRB-102, GRB-104, GRB-106, GRB-108 and GRB-110."
    tb = toolbox_factory([lump_sum, padded, final(read)])
    answer = tb.ask("Which projects are lump sum?")
    assert answer.repairs == 1 and answer.answer == read
    prompt = "\n".join(m.content or "" for m in tb.llm.prompts[2])  # type: ignore[attr-defined]
    assert "Your answer gives GRB-112, which no tool result shows" in prompt

    # every id the results hold: no more turns
    tb = toolbox_factory([lump_sum, final(read)])
    answer = tb.ask("Which projects are lump sum?")
    assert answer.repairs == 0 and answer.answer == read


def test_figures_the_results_hold_need_no_more_turns(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    right = LUMP_SUM_AVERAGE
    tb = toolbox_factory([right, final("The average is $6,510,000.")])
    answer = tb.ask("What is the average contract value of the lump sum projects?")
    assert answer.repairs == 0 and answer.answer == "The average is $6,510,000."
