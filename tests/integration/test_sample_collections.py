"""The sample's content declared as collections (``toolspecs/collections.yaml``): the
title blocks of its blueprint scans read by OCR with declared patterns, projects resolved
through the sample's alias file, and the tools the declarations generate."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from toolrag import Settings, Toolbox
from toolrag.content.collection_spec import load_collections

from ..conftest import DATA, REPO

SAMPLE = REPO / "toolspecs" / "collections.yaml"
SHEETS = yaml.safe_load((DATA / "blueprints" / "sheets.yaml").read_text())
# every fourth sheet, and the sheets whose project code OCR reads with a space ("GRB-1 02")
CHOSEN = {s["file"] for s in SHEETS[::4]} | {"GRB-102_S-101.png", "GRB-111_A-201.png"}


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> Toolbox:
    specs = {c.name: c for c in load_collections(SAMPLE)}
    blueprints = specs["blueprints"].model_copy(
        update={"paths": [f"blueprints/{name}" for name in sorted(CHOSEN)]}
    )
    root = tmp_path_factory.mktemp("sample-collections")
    settings = Settings(
        data_dir=DATA,
        index_dir=root / "indexes",
        state_dir=root / "state",
        collections_file=root / "none.yaml",
        llm_provider="scripted",
    )
    tb = Toolbox(settings, collections=[blueprints, specs["schedules"]])
    reports = tb.index()
    assert not [e for r in reports for e in r.errors]
    return tb


def test_the_declared_patterns_read_every_title_block(toolbox: Toolbox) -> None:
    rows = {h.source.split("/")[-1]: h for h in toolbox.collection_indexes["blueprints"].rows()}
    assert set(rows) == CHOSEN
    for sheet in SHEETS:
        if sheet["file"] not in CHOSEN:
            continue
        got = rows[sheet["file"]]
        assert got.extra["project"] == sheet["project"], sheet["file"]
        assert got.extra["sheet"] == sheet["sheet_number"], sheet["file"]
        assert got.extra["discipline"].lower() == str(sheet["discipline"]).lower()
        assert got.title == sheet["title"]
        assert got.extra["revision"] == str(sheet["revision"])
        assert got.extra["date"] == dt.date.fromisoformat(str(sheet["revision_date"])).isoformat()


def test_the_generated_tools_filter_by_project_name_and_list_a_schedule(
    toolbox: Toolbox,
) -> None:
    whole = toolbox.call("get_project_schedule", project="Summit Ridge Hotel")
    assert whole.success and whole.data
    assert {r["project"] for r in whole.data} == {"GRB-107"}
    assert [r["doc_id"] for r in whole.data] == sorted(r["doc_id"] for r in whole.data)
    one = toolbox.call(
        "get_project_schedule", query="substantial completion", project="Riverside Medical"
    )
    assert one.success and one.data[0]["title"] == "Substantial completion"
    assert one.data[0]["planned_finish"] == "2026-06-30"
    sheets = toolbox.call("search_blueprints", query="foundation plan")
    first = sheets.data[0]
    assert sheets.success and first["sheet"] and first["title"]
    # a sheet's id is its file, and its title field is its title: each is shown once
    assert "doc_id" not in first and "sheet_title" not in first
    assert "text" not in first  # passage_chars 0: the fields hold the title block
    late = toolbox.call("get_project_schedule", status="late")
    assert late.success and late.data and {r["status"] for r in late.data} == {"late"}
    # the days between the planned and the actual finish, in words; the row's text keeps
    # only the columns no field shows
    roofing = toolbox.call("get_project_schedule", query="roofing", project="GRB-103")
    row = roofing.data[0]
    assert row["title"] == "Roofing complete" and row["actual_finish"] == "2025-09-02"
    assert row["days_after_plan"] == "6 (actual_finish is 6 days after planned_finish)"
    assert row["text"] == "planned_start: 2025-07-01\nresponsible: Redstone Roofing"


def test_every_sample_collection_is_valid_and_its_alias_file_exists() -> None:
    specs = load_collections(SAMPLE)
    assert [c.name for c in specs] == ["documents", "blueprints", "schedules"]
    for spec in specs:
        for f in spec.fields:
            path = f.alias_file(REPO / "toolspecs")
            assert path is None or path.is_file(), path
