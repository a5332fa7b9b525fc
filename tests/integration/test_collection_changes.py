"""A collection whose declaration changes after it was indexed, keyword values resolved against
an alias file at index time, titles from a declared field, and filtered searches that list."""

from __future__ import annotations

from pathlib import Path

from toolrag import Toolbox

from ..collection_files import COLLECTIONS_YAML, corpus_settings, make_corpus

ALIASES = """\
values:
  - {value: Lab 2, names: [Second laboratory]}
  - {value: Lab 4, names: [Fourth laboratory]}
  - {value: Lab 1, names: [First laboratory]}
  - {value: Lab 3, names: [Third laboratory]}
"""

WITH_ROOM = COLLECTIONS_YAML.replace(
    """      - {name: price, type: number, source: "column:price"}
    filters: [status, price]""",
    """      - {name: price, type: number, source: "column:price"}
      - {name: room, type: keyword, source: "column:room", aliases: rooms.yaml}
      - {name: label, type: keyword, source: "column:name"}
    title_field: label
    filters: [status, price, room]""",
)


def test_a_field_added_after_indexing_is_filled_in_and_nothing_is_lost(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "own")
    settings = corpus_settings(root, top_k=1)
    Toolbox(settings).index()
    before = {h.id for h in Toolbox(settings).collection_indexes["equipment"].rows()}
    register = root / "equipment" / "register.csv"
    register.write_text(register.read_text().replace("Lab 4", "LAB4"), encoding="utf-8")
    (root / "toolspecs" / "rooms.yaml").write_text(ALIASES, encoding="utf-8")
    (root / "toolspecs" / "collections.yaml").write_text(WITH_ROOM, encoding="utf-8")

    report = {r.collection: r for r in Toolbox(settings).index()}["equipment"]
    # the one room the alias file does not name is one line; the rest resolve to its values
    assert report.errors == [
        f"{register}: field room: 'Imaging suite' is not a value or name in its alias file; "
        "indexed as read. Add it to the alias file, or fix the field's source."
    ]
    rows = Toolbox(settings).collection_indexes["equipment"].rows()
    assert {h.id for h in rows} == before
    rooms = {h.doc_id: h.extra.get("room") for h in rows}
    assert rooms == {
        "EQ-001": "Lab 2",
        "EQ-002": "Lab 4",  # read as LAB4, stored as the alias file's value
        "EQ-003": "Lab 1",
        "EQ-004": "Imaging suite",
        "EQ-005": "Lab 3",
    }
    assert {h.doc_id: h.title for h in rows}["EQ-003"] == "Stereo microscope"

    tb = Toolbox(settings)
    by_name = tb.call("search_equipment", query="centrifuge", room="fourth laboratory")
    assert by_name.success and [r["doc_id"] for r in by_name.data] == ["EQ-002"]
    # top_k is 1: a search with no filter gives one match, a filtered one lists what it finds
    assert len(tb.call("search_equipment", query="microscope").data) == 1
    listed = tb.call("search_equipment", query="microscope", status="in_service")
    assert listed.success and {r["doc_id"] for r in listed.data} == {"EQ-001", "EQ-003", "EQ-004"}
    assert all(len(r["text"]) <= 300 for r in listed.data[1:])  # past top_k: less text

    # no query: everything the filters match, in the file's order; neither: a clear error
    broken = tb.call("search_equipment", status="broken")
    assert broken.success and [r["doc_id"] for r in broken.data] == ["EQ-002", "EQ-005"]
    neither = tb.call("search_equipment", query=" ")
    assert not neither.success and neither.error_code == "INVALID_ARGUMENT"
    assert "give a filter" in (neither.suggestion or "")
