"""`toolrag tools lint`: each rule of the tool-card contract fires on a card that breaks it,
says how to fix it, and stays quiet on a card that keeps it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolrag import Settings, Toolbox
from toolrag.cards.card import ToolCard
from toolrag.cards.lint import LintFinding, lint_cards
from toolrag.cli.main import app
from toolrag.models.embeddings import make_embedding

GOOD_DESCRIPTION = (
    "Get the current weather of one city. Use it for questions about today's temperature, "
    "wind or rain in a named place. Returns the temperature in Celsius, the wind speed and a "
    "one-word summary. It does not forecast: use get_forecast for later days."
)
EXAMPLES = [f"What is the weather in city {i} today?" for i in range(6)]


def card(**fields: Any) -> ToolCard:
    base: dict[str, Any] = {
        "name": "get_weather",
        "description": GOOD_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name, e.g. Oslo."}},
        },
        "examples": EXAMPLES,
    }
    return ToolCard.model_validate({**base, **fields})


def rules(findings: list[LintFinding], tool: str | None = None) -> set[tuple[str, str]]:
    return {(f.rule, f.severity) for f in findings if tool is None or f.tool == tool}


@pytest.fixture(scope="module")
def embed() -> Any:
    return make_embedding(Settings())


def test_a_card_that_keeps_the_contract_has_no_findings(embed: Any) -> None:
    forecast = card(
        name="get_forecast",
        description=(
            "Get the five-day forecast of one city. Use it for questions about the coming "
            "days. Returns one line per day with high, low and rain chance. It does not give "
            "the current weather: use get_weather."
        ),
    )
    assert lint_cards([card(), forecast], embed) == []


@pytest.mark.parametrize(
    ("name", "severity", "fix_has"),
    [("GetWeather", "error", "get_weather"), ("weather", "error", "verb_noun"),
     ("weather_now", "warning", "get_")],
)  # fmt: skip
def test_names_are_verb_noun(name: str, severity: str, fix_has: str) -> None:
    findings = lint_cards([card(name=name)])
    assert rules(findings) == {("name", severity)}
    assert fix_has in findings[0].fix


def test_one_verb_per_meaning_across_the_pool() -> None:
    pool = [card(name="get_weather"), card(name="get_forecast"), card(name="fetch_alerts")]
    findings = [f for f in lint_cards(pool) if f.rule == "verb-prefix"]
    assert [(f.tool, f.fix) for f in findings] == [("fetch_alerts", "Rename it get_alerts.")]


@pytest.mark.parametrize(
    ("description", "missing"),
    [
        ("Get the weather. Returns it. It does not forecast.", "when to use"),
        ("Get the weather. Use it for weather questions. It does not forecast.", "returns"),
        ("Get the weather. Use it for weather questions. Returns the temperature.", "does not"),
        ("", "empty"),
    ],
)
def test_descriptions_say_what_when_returns_and_not(description: str, missing: str) -> None:
    findings = [f for f in lint_cards([card(description=description)]) if f.severity == "error"]
    assert [f.rule for f in findings] == ["description"]
    assert missing in findings[0].message


def test_a_long_description_is_a_warning() -> None:
    long = GOOD_DESCRIPTION + " It caches for a minute. It needs no key. It is free."
    assert rules(lint_cards([card(description=long)])) == {("description", "warning")}


def test_every_parameter_needs_a_description() -> None:
    params = {"type": "object", "properties": {"city": {"type": "string"}, "units": {}}}
    findings = lint_cards([card(parameters=params)])
    assert [f.message for f in findings] == [
        "Parameter 'city' has no description.",
        "Parameter 'units' has no description.",
    ]


def test_a_description_that_lists_only_some_allowed_values_is_a_warning() -> None:
    allowed = {"enum": ["passed", "failed", "partial", "scheduled"], "type": "string"}
    some = {"anyOf": [allowed, {"type": "null"}], "description": "passed, failed or partial."}
    every = {**allowed, "description": "passed, failed, partial or scheduled (not held yet)."}
    none = {**allowed, "description": "The inspection's outcome."}
    findings = [
        f
        for spec in (some, every, none)
        for f in lint_cards([card(parameters={"type": "object", "properties": {"result": spec}})])
    ]
    assert [(f.rule, f.severity, f.message) for f in findings] == [
        (
            "enum-description",
            "warning",
            "Parameter 'result' lists passed, failed, partial in its description but also "
            "allows scheduled.",
        )
    ]


@pytest.mark.parametrize("n", [0, 4, 41])
def test_examples_are_between_5_and_40(n: int) -> None:
    findings = lint_cards([card(examples=[f"weather {i}?" for i in range(n)])])
    assert rules(findings) == {("examples", "warning")}


def test_deprecated_by_must_name_a_tool_of_the_pool() -> None:
    old = card(name="get_weather_v1", description="", deprecated_by="get_weather_v3")
    findings = lint_cards([card(), old])
    # A deprecated card is out of retrieval: only its successor is checked, not its text.
    assert rules(findings) == {("deprecated", "error")}
    assert lint_cards([card(), old.model_copy(update={"deprecated_by": "get_weather"})]) == []


def test_near_duplicate_descriptions_are_found(embed: Any) -> None:
    twin = card(name="get_weather_now")
    findings = lint_cards([card(), twin], embed)
    assert [(f.tool, f.rule) for f in findings] == [("get_weather_now", "duplicate")]
    assert "get_weather" in findings[0].message and "deprecated_by" in findings[0].fix


def test_cli_lint_exits_1_on_errors_and_prints_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text(json.dumps([{"name": "WeatherTool", "description": "Weather."}]))
    result = CliRunner().invoke(app, ["tools", "lint", "--tools", str(bad), "--no-duplicates"])
    assert result.exit_code == 1
    assert "WeatherTool: error [name]" in result.output and "Fix: Rename it" in result.output
    good = tmp_path / "good.json"
    good.write_text(json.dumps([card().model_dump()]))
    result = CliRunner().invoke(app, ["tools", "lint", "--tools", str(good), "--json"])
    assert result.exit_code == 0 and json.loads(result.output) == []


def test_cli_lint_on_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["tools", "lint", "--tools", str(tmp_path / "no.json")])
    assert result.exit_code != 0 and "does not exist" in result.output
    assert "Traceback" not in result.output


def test_the_toolbox_cards_keep_the_contract(sample_settings: Settings, embed: Any) -> None:
    cards = Toolbox(sample_settings).cards()
    findings = lint_cards(cards, embed)
    assert [f for f in findings if f.severity == "error"] == []
    assert not [
        f
        for f in findings
        if f.rule in ("examples", "duplicate", "verb-prefix", "enum-description")
    ]
    effects = {c.name: c.side_effect for c in cards}
    assert effects["create_inspection_note"] == "write" and effects["run_sql"] == "read"
