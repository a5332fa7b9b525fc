"""Values outside a parameter's listed values (toolrag.guard.grounding.choices): written as the
listed value they stand for, left out of an optional parameter with a note, kept for a
required one, on any tool's JSON schema."""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.tools import FunctionTool
from pydantic import BaseModel

from toolrag.guard.grounding.choices import fit_choices, listed_value
from toolrag.tools.prompting import tool_schema

KINDS = ["contract", "change_order", "rfi", "meeting_minutes"]


class SearchArgs(BaseModel):
    query: str
    kind: Literal["contract", "change_order", "rfi", "meeting_minutes"] | None = None
    unit: Literal["metric", "imperial"] = "metric"


def _search(**kwargs: Any) -> str:
    """Search the records."""
    return str(kwargs)


def _schema() -> dict[str, Any]:
    schema = tool_schema(FunctionTool.from_defaults(fn=_search, fn_schema=SearchArgs))
    assert schema is not None
    return schema


def test_case_separators_and_plurals_find_the_listed_value() -> None:
    assert listed_value("Change Orders", KINDS) == "change_order"
    assert listed_value("meeting-minutes", KINDS) == "meeting_minutes"
    assert listed_value("RFIs", KINDS) == "rfi"
    assert listed_value("subcontracts", KINDS) is None  # another word, not a spelling
    assert listed_value("contracts", ["contract", "contracts"]) is None  # two would fit


def test_a_spelling_of_a_listed_value_is_written_as_it() -> None:
    fitted = fit_choices(_schema(), {"query": "doors", "kind": "Change Orders"})
    assert fitted.arguments == {"query": "doors", "kind": "change_order"}
    assert fitted.note == "Wrote kind='change_order' for 'Change Orders': the listed value."


def test_an_unlisted_optional_value_is_left_out_and_said() -> None:
    fitted = fit_choices(_schema(), {"query": "10 percent retainage", "kind": "subcontracts"})
    assert fitted.arguments == {"query": "10 percent retainage"}
    assert fitted.note is not None
    assert fitted.note.startswith("Left out kind='subcontracts' (not one of its values: contract,")
    assert "without that filter" in fitted.note


def test_an_empty_optional_value_is_left_out_quietly() -> None:
    fitted = fit_choices(_schema(), {"query": "doors", "kind": ""})
    assert fitted.arguments == {"query": "doors"} and fitted.note is None


def test_listed_values_and_other_parameters_are_untouched() -> None:
    given = {"query": "subcontracts", "kind": "rfi", "unit": "imperial"}
    assert fit_choices(_schema(), given) == (given, None)
    assert fit_choices(None, {"kind": "x"}) == ({"kind": "x"}, None)


def test_a_required_parameter_keeps_an_unlisted_value_for_the_schema_to_refuse() -> None:
    schema = _schema()
    schema["required"] = ["query", "unit"]
    fitted = fit_choices(schema, {"query": "doors", "unit": "furlongs"})
    assert fitted.arguments == {"query": "doors", "unit": "furlongs"} and fitted.note is None
    assert fit_choices(schema, {"query": "d", "unit": "Imperial"}).arguments["unit"] == "imperial"
