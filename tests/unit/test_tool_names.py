"""Which tools a question names: identifier-shaped names only, case folded unless ambiguous."""

from __future__ import annotations

from toolrag.cards.names import NameFinder


def finder(*names: str) -> NameFinder[str]:
    return NameFinder({name: name for name in names})


def test_identifier_shaped_names_are_found_in_order_once() -> None:
    find = finder("get_weather", "weather.get", "list-files", "getWeather", "translate")
    text = "Use weather.get, then getWeather(city) and list-files; get_weather too, weather.get."
    assert find(text) == ["weather.get", "getWeather", "list-files", "get_weather"]


def test_a_one_word_name_is_an_ordinary_word() -> None:
    find = finder("translate", "add", "CalcProduct")
    assert find("Translate hello and add 2 to 3 with CalcProduct") == []


def test_a_quoted_one_word_name_names_its_tool() -> None:
    find = finder("translate", "add", "multiply", "CalcProduct")
    assert find("Use the `translate` tool, then CalcProduct") == ["translate"]
    assert find("Functions to use: ['multiply', 'add', 'sub']") == ["multiply", "add"]
    assert find('Call "CalcProduct" or "Add"') == ["CalcProduct", "add"]


def test_a_quote_must_close_right_after_the_word() -> None:
    find = finder("translate", "add", "t")
    # the apostrophes of "don't" and "it's" open no quote; a quoted phrase is not a name
    assert find("I don't 'translate' it's fine") == ["translate"]
    assert find("Mark 'add milk' done, and 'add's twin; `add`s") == []
    assert find("quotes that differ: 'add\" or `add'") == []


def test_a_name_inside_a_longer_identifier_is_not_named() -> None:
    find = finder("get_weather")
    assert find("call my_get_weather_v2 or get_weather_v2") == []
    assert find("call get_weather() now") == ["get_weather"]


def test_case_is_folded_unless_two_tools_differ_only_in_case() -> None:
    assert finder("get_weather")("Try GET_WEATHER") == ["get_weather"]
    find = finder("Get_Weather", "get_weather")
    assert find("Try GET_WEATHER") == []
    assert find("Try Get_Weather") == ["Get_Weather"]
