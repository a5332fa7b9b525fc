"""Prerequisites read from parameter descriptions, and ``best`` placing them after the tool that
needs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool
from typer.testing import CliRunner

from toolrag import Settings
from toolrag.cards.card import ToolCard
from toolrag.cli.main import app
from toolrag.events import AgentEvent
from toolrag.models.embeddings import make_embedding
from toolrag.retrieval import index as toolindex
from toolrag.retrieval.agent_retriever import make_tool_retriever
from toolrag.retrieval.index import ToolIndex
from toolrag.retrieval.prerequisites import name_words, requirements


def card(name: str, description: str = "", **params: str) -> ToolCard:
    props: dict[str, Any] = {p: {"type": "string", "description": d} for p, d in params.items()}
    return ToolCard(
        name=name,
        description=description or f"{name} tool.",
        parameters={"type": "object", "properties": props},
    )


def named(cards: list[ToolCard]) -> dict[str, list[tuple[str, ...]]]:
    """requirements() by card name instead of id."""
    names = {c.id: c.name for c in cards}
    return {
        names[tid]: [tuple(names[g] for g in group) for group in groups]
        for tid, groups in requirements(cards).items()
    }


def test_name_words_split_every_spelling() -> None:
    assert name_words("SkyScrapperSearchAirport") == ["sky", "scrapper", "search", "airport"]
    assert name_words("search_car_rentals") == ["search", "car", "rentals"]
    assert name_words("Get_Hotel_Reviews(Tips)") == ["get", "hotel", "reviews", "tips"]
    assert name_words("weather.get-HTTPStatus") == ["weather", "get", "http", "status"]


def test_a_parameter_that_says_where_its_value_comes_from_names_a_prerequisite() -> None:
    cards = [
        card("Search_Car_Rentals"),
        card("get_orders"),
        card(
            "Vehicle_Details",
            vehicle_id="Vehicle ID. `vehicle_id` can be retrieved from "
            "`api/v1/cars/searchCarRentals`**(Search Car Rentals)** endpoint in **Car Rental** "
            "collection as `vehicle_id` inside `search_results` object.",
        ),
        card("cancel_order", order_id="The order id, as returned by get_orders."),
        card("refund_order", order_id="The id of the order. Use the getOrders tool first."),
    ]
    assert named(cards) == {
        "Vehicle_Details": [("Search_Car_Rentals",)],
        "cancel_order": [("get_orders",)],
        "refund_order": [("get_orders",)],
    }


def test_a_mention_without_provenance_words_is_not_a_prerequisite() -> None:
    # BFCL's finance.predict_future_value says "The present value of the investment." while the
    # pool has calculate_present_value: words, not a reference
    cards = [
        card("calculate_present_value"),
        card("get_service_providers"),
        card("predict_future_value", present_value="The present value of the investment."),
        card(
            "get_customer_bookings",
            flag="Flag to filter out bookings that are not taken by service providers.",
        ),
        card("show_order", order_id="The order to show (see calculate present value)."),
    ]
    assert named(cards) == {}


def test_the_end_of_a_longer_name_counts_only_when_marked_as_a_tool() -> None:
    cards = [
        card("SkyScrapperSearchAirport"),
        card(
            "SkyScrapperFlightSearch",
            originSkyId="The originSkyId code can be extracted from the Search Airport API in "
            "the Flights collection.",
        ),
        card("nearby", place="A place obtained from a search airport lookup."),
        # another API's name: "a list" is the end of clicksend_get_all_contacts_in_a_list
        card("clicksend_get_all_contacts_in_a_list"),
        card("kubernetes_list_pods", limit="The most items returned in a list call."),
    ]
    assert named(cards) == {"SkyScrapperFlightSearch": [("SkyScrapperSearchAirport",)]}


def test_alternatives_groups_longest_names_and_no_self_reference() -> None:
    cards = [
        card("Search_Hotel"),
        card("Search_Hotel_Destination"),
        card("Search_Hotels"),
        card("SearchHotels"),  # reads the same in words as Search_Hotels
        card("Search_Hotels_By_Coordinates"),
        card(
            "Get_Hotel_Policies",
            hotel_id="`hotel_id` can be retrieved from **(Search Hotels)** or **(Search Hotels "
            "By Coordinates)** endpoint.",
            dest_id="Obtained from Search Hotel Destination.",
            page="Page of the results returned by Get Hotel Policies.",
        ),
    ]
    assert named(cards) == {
        "Get_Hotel_Policies": [
            ("Search_Hotels", "SearchHotels", "Search_Hotels_By_Coordinates"),
            ("Search_Hotel_Destination",),
        ]
    }


@pytest.fixture(scope="module")
def embed():  # the real embedding model
    return make_embedding(Settings())


CAR_POOL = [
    card(
        "Search_Car_Location",
        "Find car rental locations by name, address or city: returns their coordinates.",
        query="Names of locations, cities, airports.",
    ),
    card(
        "Search_Car_Rentals",
        "Search the rental cars available between two dates at a place.",
        pick_up_latitude="The pick up location's latitude, retrieved from Search Car Location.",
        pick_up_date="Pick up date.",
    ),
    card(
        "Vehicle_Details",
        "The detail information of a rental car: mileage, seats, insurance and price.",
        vehicle_id="Vehicle ID, returned by Search Car Rentals.",
    ),
    card("get_weather", "Get the current weather forecast for a city.", city="City name."),
    card("send_email", "Send an email message to a recipient.", to="Recipient address."),
    card("book_flight", "Book a flight ticket between two airports.", origin="Airport code."),
    card("convert_currency", "Convert an amount of money into another currency.", amount="Sum."),
]


def test_best_places_each_prerequisite_after_the_tool_that_needs_it(
    embed: object, tmp_path: Path
) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(CAR_POOL)
    question = "What are the mileage, seats and insurance of the car I could rent in Lisbon?"
    hits = index.retrieve(question, k=3, floor=0.3)
    assert [(h.name, h.required_by) for h in hits] == [
        ("Vehicle_Details", None),
        ("Search_Car_Rentals", "Vehicle_Details"),
        ("Search_Car_Location", "Search_Car_Rentals"),
    ]
    # the same search without the step ranks the question's own words first
    index.place_requirements = False
    plain = index.retrieve(question, k=3)
    assert plain[0].name == "Vehicle_Details" and plain[2].name != "Search_Car_Location"
    assert all(h.required_by is None for h in plain)
    # the strategies that only rank leave prerequisites alone
    index.place_requirements = True
    assert all(h.required_by is None for h in index.retrieve(question, k=3, strategy="hybrid"))


def test_a_prerequisite_already_placed_is_not_repeated(embed: object, tmp_path: Path) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(CAR_POOL)
    hits = index.retrieve("Find car rental locations near Lisbon airport and rent a car", k=7)
    names = [h.name for h in hits]
    assert len(names) == len(set(names)) == 7
    for h in hits:  # a prerequisite comes after the tool that needs it
        if h.required_by:
            assert names.index(h.required_by) < names.index(h.name)


def test_a_question_no_tool_fits_gets_no_prerequisites(embed: object, tmp_path: Path) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(CAR_POOL)
    assert index.retrieve("Tell me a joke about penguins", k=3, floor=0.3) == []


def test_reopening_reads_the_saved_prerequisites(
    embed: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def counted(cards: list[ToolCard]) -> dict[str, list[tuple[str, ...]]]:
        calls.append(len(cards))
        return requirements(cards)

    monkeypatch.setattr(toolindex, "requirements", counted)
    first = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    first.sync(CAR_POOL)
    reopened = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    reopened.sync(CAR_POOL)
    assert calls == [7] and reopened.requires == first.requires
    assert reopened.requires[CAR_POOL[2].id] == [(CAR_POOL[1].id,)]
    # a changed card finds them again: Vehicle_Details no longer names its source
    changed = CAR_POOL[2].model_copy(
        update={"parameters": {"type": "object", "properties": {"vehicle_id": {"type": "string"}}}}
    )
    reopened.sync([*CAR_POOL[:2], changed, *CAR_POOL[3:]])
    assert calls == [7, 7] and changed.id not in reopened.requires


def test_the_agents_tool_retriever_offers_prerequisites_and_says_why(
    embed: object, tmp_path: Path
) -> None:
    tools = [
        FunctionTool.from_defaults(fn=lambda **kw: "ok", name=c.name, description=c.description)
        for c in CAR_POOL
    ]
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(CAR_POOL)
    retriever = make_tool_retriever(index, tools, k=3)
    question = "What are the mileage, seats and insurance of the car I could rent in Lisbon?"
    offered = [t.metadata.get_name() for t in retriever.retrieve(question)]
    assert offered == ["Vehicle_Details", "Search_Car_Rentals", "Search_Car_Location"]
    required = retriever.retriever.last_required  # type: ignore[attr-defined]
    assert required == {
        "Search_Car_Rentals": "Vehicle_Details",
        "Search_Car_Location": "Search_Car_Rentals",
    }
    event = AgentEvent(kind="tools_retrieved", tools=offered, data={"required_by": required})
    assert event.line().endswith(
        "Vehicle_Details, Search_Car_Rentals (for Vehicle_Details), "
        "Search_Car_Location (for Search_Car_Rentals)"
    )


def test_tools_search_cli_names_what_each_prerequisite_is_for(tmp_path: Path) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps([c.model_dump(mode="json") for c in CAR_POOL]))
    question = "What are the mileage, seats and insurance of the car I could rent in Lisbon?"
    args = ["tools", "search", question, "--tools", str(pool), "--k", "3"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert [(h["name"], h["required_by"]) for h in hits] == [
        ("Vehicle_Details", None),
        ("Search_Car_Rentals", "Vehicle_Details"),
        ("Search_Car_Location", "Search_Car_Rentals"),
    ]
    table = CliRunner().invoke(app, [*args, "--index-dir", str(tmp_path / "idx")])
    assert table.exit_code == 0 and "needed by Vehicle_Details" in table.stdout
    assert (tmp_path / "idx" / "tools_requirements.json").is_file()
    bad = CliRunner().invoke(app, [*args, "--strategy", "fastest"])
    assert bad.exit_code == 2 and "unknown strategy" in bad.output
