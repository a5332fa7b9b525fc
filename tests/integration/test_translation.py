"""Questions written outside the English alphabet, translated by the LLM for the tool search."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from toolrag import ScriptedLLM, Settings, Toolbox
from toolrag.cards.card import load_tool_list
from toolrag.errors import ConfigError
from toolrag.events import AgentEvent, listening
from toolrag.models.embeddings import make_embedding
from toolrag.retrieval.index import ToolIndex
from toolrag.retrieval.translation import (
    LANGUAGE_CONFIDENCE,
    LANGUAGES,
    QueryTranslator,
    language,
    needs_translation,
    parse_translation,
)

from ..conftest import final, react
from .test_cli import run_cli, scripted_env

FIXTURES = Path(__file__).parents[1] / "fixtures"
RAIN_ZH = "明天巴黎会下雨吗？"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("北京后天的天气如何？", True),
        ("스테이크 만드는 법 알려줘", True),
        ("ช่วยหาคุณแม่บ้านที่ให้บริการรีดผ้า", True),
        ("Какая погода в Москве?", True),
        ("hey do 거실 에어컨 실행", True),  # mostly Korean letters
        ("Will it rain in Paris tomorrow?", False),
        # the Latin alphabet in another language: the language identifier says which
        ("Quelle est la météo à Genève demain ?", True),
        ("Tìm chuyến xe cho tôi từ Hà Nội loại Plus trong 10 phút nữa.", True),
        ("Quiero calcular el pago mensual para un crédito de auto a 12 meses", True),
        ("Saya melihat bahwa produk dengan ID XY123 masih memiliki stok ukuran M.", True),
        # short, where the identifier over all its languages gave low odds (0.43, 0.69)
        ("Qual a temperatura atual em Divinópolis?", True),
        ("Apakah produk dengan ID 12345XYZ masih tersedia dalam ukuran M dan warna merah?", True),
        ("I'd like to listen to all tracks by Käärijä.", False),
        # short English that the identifier gives a neighbour of English at low odds
        ("Get weather of Ha Noi for me", False),
        ("set an alarm for 11 PM", False),
        ("LIST C DRIIVE", False),
        ("12345 + 678 = ?", False),  # no letters
        ("", False),
    ],
)
def test_which_questions_are_translated(text: str, expected: bool) -> None:
    assert needs_translation(text) is expected


def test_the_language_identifier_names_the_language() -> None:
    code, probability = language("Qual é a previsão do tempo para amanhã em Lisboa?")
    assert code == "pt" and probability >= 0.9
    code, probability = language("Qual a temperatura atual em Divinópolis?")
    assert code == "pt" and LANGUAGE_CONFIDENCE < probability < 0.9
    assert language("Will it rain in Paris tomorrow?")[0] == "en"


def test_the_identifier_chooses_among_the_languages_the_llm_translates() -> None:
    # over all 142 languages of the model this is Nigerian Pidgin at 0.75
    assert language("Get weather of Ha Noi for me")[0] == "en"
    found = {language(text)[0] for text in ("Dit is 'n toets van die weer", "hoe laat is het")}
    assert found <= set(LANGUAGES)


def test_the_translation_is_read_from_the_reply() -> None:
    original = "스테이크 만드는 법 알려줘"
    reply = 'Here is the translation:\n"Tell me how to make steak."'
    assert parse_translation(reply, original) == "Tell me how to make steak."
    assert parse_translation("English: Get Adidas's work order\n", original) == (
        "Get Adidas's work order"
    )
    assert parse_translation("  \n", original) is None
    assert parse_translation("x" * 500, original) is None  # no translation is that long


def test_a_translation_is_made_once_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "translations.sqlite"
    llm = ScriptedLLM(["Will it rain in Paris tomorrow?"])
    translate = QueryTranslator(path, llm)
    assert translate("Will it rain in Paris?") == "Will it rain in Paris?"  # English: no call
    assert llm.remaining == 1
    assert translate(RAIN_ZH) == "Will it rain in Paris tomorrow?"
    assert RAIN_ZH in (llm.prompts[0][-1].content or "")
    assert translate(f" {RAIN_ZH} ") == "Will it rain in Paris tomorrow?"  # cached: no call
    assert llm.remaining == 0 and translate.missing == 0
    replay = QueryTranslator(path)  # no LLM: the cache only
    assert replay(RAIN_ZH) == "Will it rain in Paris tomorrow?"
    assert len(replay.seconds()) == 1
    assert replay("北京后天的天气如何？") == "北京后天的天气如何？" and replay.missing == 1


def test_a_failed_translation_searches_the_question_as_it_is(tmp_path: Path) -> None:
    broken = QueryTranslator(tmp_path / "a.sqlite", ScriptedLLM([]))  # raises when called
    assert broken(RAIN_ZH) == RAIN_ZH and broken.missing == 1
    empty = QueryTranslator(tmp_path / "b.sqlite", ScriptedLLM(["Here is the translation:"]))
    assert empty(RAIN_ZH) == RAIN_ZH and empty.missing == 1

    def no_model() -> ScriptedLLM:
        raise ConfigError("llm_provider is 'openai' but no API key is set.")

    unloadable = QueryTranslator(tmp_path / "c.sqlite", no_model)
    assert unloadable(RAIN_ZH) == RAIN_ZH and unloadable.missing == 1
    assert unloadable("北京后天的天气如何？") == "北京后天的天气如何？"  # not built again
    assert unloadable.missing == 2 and unloadable.llm is None


def test_the_llm_is_built_only_for_a_question_that_needs_it(tmp_path: Path) -> None:
    built: list[ScriptedLLM] = []

    def make() -> ScriptedLLM:
        built.append(ScriptedLLM(["Will it rain in Paris tomorrow?"]))
        return built[-1]

    translate = QueryTranslator(tmp_path / "t.sqlite", make)
    translate("Will it rain in Paris?")
    assert built == []
    assert translate(RAIN_ZH) == "Will it rain in Paris tomorrow?" and len(built) == 1


def test_the_tool_index_searches_the_translation(tmp_path: Path) -> None:
    index = ToolIndex(tmp_path / "index", make_embedding(Settings()))
    index.sync(load_tool_list(FIXTURES / "tools_small.json"))
    llm = ScriptedLLM(["Will it rain in Paris tomorrow?"])
    index.translator = QueryTranslator(tmp_path / "t.sqlite", llm)
    assert index.search_text(RAIN_ZH) == "Will it rain in Paris tomorrow?"
    assert index.retrieve(RAIN_ZH, k=1)[0].name == "get_weather"
    # the question's own vector is not used for a translated question
    wrong = make_embedding(Settings()).get_query_embedding("Send an email to my manager")
    assert index.retrieve(RAIN_ZH, k=1, embedding=wrong)[0].name == "get_weather"
    index.translator = QueryTranslator(tmp_path / "other.sqlite", ScriptedLLM([]))
    index.retrieve(RAIN_ZH, k=1, translate=False)  # as it is: the LLM is not asked
    assert index.translator.missing == 0


def test_the_agent_searches_tools_with_the_translation_and_says_so(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    tb = toolbox_factory(
        [
            "When is substantial completion planned for the Summit Ridge Hotel?",  # translation
            react("get_project_schedule", {"project": "GRB-107"}),
            final("Substantial completion is planned for 2027-01-29."),
        ]
    )
    tb.settings.tool_top_k = 1
    events: list[AgentEvent] = []
    with listening(events.append):
        answer = tb.ask("Summit Ridge 酒店计划什么时候实质性完工？")
    assert answer.tools_searched == (
        "When is substantial completion planned for the Summit Ridge Hotel?"
    )
    assert answer.tools_offered == ["get_project_schedule"]
    assert answer.tools_called == ["get_project_schedule"]
    retrieved = next(e for e in events if e.kind == "tools_retrieved")
    assert "searched as: When is substantial completion" in retrieved.line()
    # the agent itself read the question as it was asked
    agent_prompt = "\n".join(m.content or "" for m in tb.llm.prompts[1])  # type: ignore[attr-defined]
    assert "Summit Ridge 酒店" in agent_prompt


def test_translation_can_be_turned_off(toolbox_factory: Callable[..., Toolbox]) -> None:
    tb = toolbox_factory([react("get_project_schedule", {"project": "GRB-107"}), final("Done.")])
    tb.settings.translate_questions = False
    answer = tb.ask("Summit Ridge 酒店计划什么时候实质性完工？")
    assert answer.tools_searched is None and tb.tool_index.translator is None


def test_ask_trace_shows_the_translation_searched(
    sample_settings: Settings, tmp_path: Path
) -> None:
    searched = "When did Fire Station 7 reach substantial completion?"
    turns = [
        searched,
        react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
        final("Substantial completion was reached on 2025-12-12."),
    ]
    env = scripted_env(sample_settings.index_dir, tmp_path, turns)
    proc = run_cli("ask", "7号消防站什么时候实质性完工？", "--trace", env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"Searched as: {searched}" in proc.stdout
    assert "get_project_schedule" in proc.stdout and "2025-12-12" in proc.stdout
    assert (
        QueryTranslator(tmp_path / "state" / "translations.sqlite").cached(
            "7号消防站什么时候实质性完工？"
        )
        == searched
    )


def test_a_state_folder_that_cannot_be_written_keeps_translations_in_memory(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    llm = ScriptedLLM(["Will it rain in Paris tomorrow?"])
    translate = QueryTranslator(blocked / "translations.sqlite", llm)
    assert translate(RAIN_ZH) == "Will it rain in Paris tomorrow?"
    assert translate(RAIN_ZH) == "Will it rain in Paris tomorrow?" and llm.remaining == 0
    assert translate.seconds() == []


def test_a_routed_question_says_what_its_tools_were_searched_as(
    toolbox_factory: Callable[..., Toolbox],
) -> None:
    searched = "What are the milestone dates of project GRB-104?"
    call = {"tool": "get_project_schedule", "arguments": {"project": "GRB-104"}}
    tb = toolbox_factory([searched, json.dumps({"action": "call_tools", "calls": [call]})])
    result = tb.route("GRB-104项目的里程碑日期是什么？")  # the router reads it as asked
    assert result.tools_searched == searched
    assert "get_project_schedule" in result.tools_offered
    assert result.valid and result.results[0].success
    english = toolbox_factory([json.dumps({"action": "call_tools", "calls": [call]})])
    assert english.route(searched).tools_searched is None
