"""Arguments the question never gave (toolrag.guard.grounding.calls): the local model copied the
code
in a parameter's description (``GRB-101``, Riverside's) into a call about Pinecrest Senior
Living and reported Riverside's inspections. The agent's first such call does not run; the
model is told what the question gives instead."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from llama_index.core.tools import FunctionTool

from toolrag import Toolbox
from toolrag.guard.grounding.calls import ground_call

from ..conftest import final, react

PINECREST = "Which inspection failed on the Pinecrest Senior Living project in December 2025?"
TWO_PROJECTS = (
    "Did an inspection fail at Pinecrest Senior Living or the Summit Ridge Hotel in December 2025?"
)
FAILED = {"result": "failed", "since": "2025-12-01", "until": "2025-12-31"}


def _inspections(observation: str) -> list[dict[str, object]]:
    body = json.loads(observation)["data"]["body"]
    return body["inspections"] if isinstance(body, dict) else body


def _calls(tb: Toolbox, run_id: str, tool: str) -> list[tuple[str, dict[str, object]]]:
    records = tb.guard.audit.tail(20) if tb.guard.audit else []
    return [(r.status, r.arguments) for r in records if r.run_id == run_id and r.tool == tool]


def test_a_code_copied_from_the_description_becomes_the_name_the_question_gives(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    tb = rest_toolbox(
        [react("list_inspections", {"project": "GRB-101", **FAILED}), final("INSP-109-02.")]
    )
    answer = tb.ask(PINECREST)
    (step,) = answer.trace
    assert step.success and {i["project"] for i in _inspections(step.observation)} == {"GRB-109"}
    note = json.loads(step.observation)["suggestion"]
    assert "project='Pinecrest Senior Living' for 'GRB-101'" in note
    assert step.arguments["project"] == "GRB-101"  # as the model wrote it, and as it ran:
    assert step.ran_with == {"project": "Pinecrest Senior Living", **FAILED}
    ((status, ran),) = _calls(tb, answer.run_id, "list_inspections")
    assert status == "ok" and ran["project"] == "Pinecrest Senior Living"


def test_with_two_names_in_the_question_the_call_is_refused_and_the_name_then_works(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    tb = rest_toolbox(
        [
            react("list_inspections", {"project": "GRB-101", **FAILED}),
            react("list_inspections", {"project": "Pinecrest Senior Living", **FAILED}),
            final("INSP-109-02 failed."),
        ]
    )
    answer = tb.ask(TWO_PROJECTS)
    refused, ran = answer.trace
    assert refused.error_code == "INVALID_ARGUMENT" and not refused.success
    error = json.loads(refused.observation)["error_message"]
    assert "project: 'GRB-101' is in neither the question nor a tool result" in error
    assert "The question gives 'Pinecrest Senior Living', 'Summit Ridge Hotel'" in error
    suggestion = json.loads(refused.observation)["suggestion"]
    assert "again with project='Pinecrest Senior Living' (or leave project out)" in suggestion
    assert ran.success
    assert {i["project"] for i in _inspections(ran.observation)} == {"GRB-109"}
    # the refused call is on record and never reached the API
    statuses = [status for status, _ in _calls(tb, answer.run_id, "list_inspections")]
    assert statuses == ["refused", "ok"]


def test_the_same_call_repeated_runs_without_the_optional_value(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    copied = {"project": "GRB-101", **FAILED}
    tb = rest_toolbox(
        [
            react("list_inspections", copied),
            react("list_inspections", copied),
            final("INSP-109-02 failed."),
        ]
    )
    answer = tb.ask(TWO_PROJECTS)
    assert [s.error_code for s in answer.trace] == ["INVALID_ARGUMENT", None]
    second = json.loads(answer.trace[1].observation)
    assert "Left out project='GRB-101'" in second["suggestion"]
    projects = {i["project"] for i in _inspections(answer.trace[1].observation)}
    assert "GRB-109" in projects  # every project's failed inspections, Pinecrest's among them
    (_, first), (_, run) = _calls(tb, answer.run_id, "list_inspections")
    assert first["project"] == "GRB-101" and "project" not in run


def test_a_code_read_in_an_earlier_result_or_a_described_pair_is_used_as_given(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    tb = rest_toolbox(
        [
            react("list_projects", {}),
            react("list_inspections", {"project": "GRB-109", **FAILED}),
            final("INSP-109-02 failed."),
        ]
    )
    answer = tb.ask(PINECREST)
    assert [s.success for s in answer.trace] == [True, True]  # GRB-109 came from list_projects
    # the parameter's description pairs GRB-101 with "Riverside Medical Office Building"
    tb = rest_toolbox(
        [react("list_inspections", {"project": "GRB-101"}), final("It has had inspections.")]
    )
    riverside = tb.ask("Which inspections has the Riverside Medical Office Building had?")
    assert riverside.trace[0].success and riverside.trace[0].ran_with is None
    # and another tool's does: list_weather_delays' "code (GRB-103) or name (Harbor Point ...)"
    tb = rest_toolbox([react("get_site_status", {"project": "GRB-103"}), final("61 workers.")])
    harbor = tb.ask("How many workers are on site at Harbor Point Apartments?")
    assert harbor.trace[0].success and harbor.trace[0].ran_with is None


def test_in_a_chat_a_code_an_earlier_turn_read_grounds_a_follow_up(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    tb = rest_toolbox(
        [
            react("list_projects", {}),
            final("Pinecrest Senior Living is GRB-109."),
            react("list_inspections", {"project": "GRB-109", **FAILED}),
            final("INSP-109-02 failed."),
        ]
    )
    tb.chat("s", "What is Pinecrest Senior Living's project code?")
    follow_up = tb.chat("s", "Which of its inspections failed in December 2025?")
    assert follow_up.trace[0].success


def _lookup(rfi_id: str, idempotency_key: str | None = None) -> str:
    """Look up an RFI by its id (RFI-101-015)."""
    return rfi_id


def test_ground_call_checks_only_with_a_question_and_runs_a_required_value_when_repeated() -> None:
    tool = FunctionTool.from_defaults(fn=_lookup)
    refused: set[str] = set()
    args = {"rfi_id": "RFI-101-015"}
    assert ground_call(tool, args, question="", seen="", refused=refused).refusal is None
    asked = "How long has RFI 15 on Riverside been open?"
    first = ground_call(tool, args, question=asked, seen="", refused=refused)
    assert first.refusal is not None and first.refusal.error_code == "INVALID_ARGUMENT"
    again = ground_call(tool, args, question=asked, seen="", refused=refused)
    assert again.refusal is None and again.arguments == args  # required: runs as given
    assert again.note and "rfi_id='RFI-101-015'" in again.note
    seen = ground_call(tool, args, question=asked, seen='{"id": "RFI-101-015"}', refused=set())
    assert seen.refusal is None and seen.note is None
    # the one id of that shape the question holds replaces a copied one, without a refusal
    copied = {"rfi_id": "RFI-103-022"}
    put = ground_call(tool, copied, question="Is RFI-101-015 open?", seen="", refused=set())
    assert put.refusal is None and put.arguments == {"rfi_id": "RFI-101-015"}
    assert put.note and "'RFI-103-022' -> 'RFI-101-015'" in put.note
    keyed = {"rfi_id": "RFI-101-015", "idempotency_key": "run-1a2b:3:x"}
    own = ground_call(tool, keyed, question="Look up RFI-101-015", seen="", refused=set())
    assert own.refusal is None  # an idempotency key the model gives is not checked


def _delays(since: str, project: str | None = None) -> str:
    """Weather delays since a date, on one project (code GRB-103 or name) or all."""
    return since


def test_an_invented_filter_is_left_out_at_once_when_the_question_names_nothing() -> None:
    """The local model called ``project="GRB-103"`` for a question about every project, was
    refused, and answered "no weather delays": with no id or name in the question there is
    nothing better to write, so the call runs without the filter the first time."""
    tool = FunctionTool.from_defaults(fn=_delays)
    args = {"since": "2025-11-01", "project": "GRB-103"}
    asked = "Across all projects, how many working days were lost to weather in November 2025?"
    run = ground_call(tool, args, question=asked, seen="", refused=set())
    assert run.refusal is None and run.arguments == {"since": "2025-11-01"}
    assert run.note and run.note.startswith("Left out project='GRB-103'")
    named = "How many days did Pinecrest Senior Living lose to weather in November 2025?"
    first = ground_call(tool, args, question=named, seen="", refused=set())
    assert first.refusal is not None  # a name to write instead: the model is told it


def test_a_write_with_a_name_the_question_never_gave_is_refused_first(
    rest_toolbox: Callable[..., Toolbox],
) -> None:
    """The author is a superintendent's name the run_sql card lists; the user never gave it."""
    note = {
        "inspection_id": "INSP-109-02",
        "note": "Drain hangers added.",
        "author": "Elena Morales",
    }
    tb = rest_toolbox(
        [react("create_inspection_note", note), react("create_inspection_note", note), final("Ok.")]
    )
    answer = tb.ask("Add a note to inspection INSP-109-02 that the drain hangers were added.")
    refused, ran = answer.trace
    assert refused.error_code == "INVALID_ARGUMENT"
    assert "author: 'Elena Morales' is in neither the question" in refused.observation
    assert ran.success and "'Elena Morales'" in json.loads(ran.observation)["suggestion"]
    statuses = [status for status, _ in _calls(tb, answer.run_id, "create_inspection_note")]
    assert statuses == ["refused", "ok"]  # one note written, after the model insisted


def test_a_value_outside_the_listed_ones_is_fitted_and_said(
    toolbox_factory: Callable[[list[str]], Toolbox],
) -> None:
    """The local model wrote ``document_type="subcontracts"`` (not a document type) and, told
    the values, answered "there are no subcontracts"; the search now runs without it."""
    wide_args = {"query": "10 percent retainage", "document_type": "subcontracts"}
    spelled_args = {"query": "apparatus bay door", "document_type": "Change Orders"}
    tb = toolbox_factory(
        [
            react("search_documents", wide_args),
            final("Done."),
            react("search_documents", spelled_args),
            final("Done."),
        ]
    )
    (wide,) = tb.ask("Which subcontract documents mention 10 percent retainage?").trace
    assert wide.success and wide.ran_with == {"query": "10 percent retainage"}
    # the observation is cut to 600 characters in the trace; the note survives the cut
    assert "Left out document_type='subcontracts' (not one of its values: bid, change_order," in (
        wide.observation
    )
    (spelled,) = tb.ask("Which change orders are about the apparatus bay door?").trace
    assert spelled.success and spelled.ran_with is not None
    assert spelled.ran_with["document_type"] == "change_order"
    assert set(re.findall(r'"document_type":"(\w+)"', spelled.read_text())) == {"change_order"}


def test_an_id_the_question_gives_by_a_known_name_is_grounded(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    sql = "SELECT COUNT(*) FROM subcontracts WHERE project_code = 'GRB-109'"
    tb = toolbox_factory([react("run_sql", {"sql": sql}), final("There are 5.")])
    answer = tb.ask("How many subcontracts does Pinecrest Senior Living have?")
    (step,) = answer.trace
    assert step.success and step.ran_with is None  # ran as written: the alias file names it
    # an id of another project is still not the question's
    other = sql.replace("GRB-109", "GRB-101")
    tb = toolbox_factory([react("run_sql", {"sql": other}), final("?"), final("?")])
    answer = tb.ask("How many subcontracts does Pinecrest Senior Living have?")
    assert answer.trace[0].error_code == "INVALID_ARGUMENT"
