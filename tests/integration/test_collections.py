"""Collections declared in ``toolspecs/collections.yaml``: a folder of a user's own files of
every kind (text PDF, DOCX, HTML, Markdown with front matter, PNG scan, CSV register) indexed
into their own LanceDB tables and searched through generated, typed, guarded tools."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from llama_index.core.tools import FunctionTool

from toolrag import ScriptedLLM, Settings, Toolbox
from toolrag.cards.lint import lint_cards
from toolrag.content import readers

from ..collection_files import corpus_settings, make_corpus
from ..conftest import TEST_ENV, final, react


def _settings(root: Path) -> Settings:
    return corpus_settings(root)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_corpus(tmp_path_factory.mktemp("own"))
    reports = Toolbox(_settings(root)).index()
    assert [e for r in reports for e in r.errors] == []
    return root


def test_every_kind_of_file_is_indexed_and_a_second_run_reads_none(corpus: Path) -> None:
    tb = Toolbox(_settings(corpus))
    policies, equipment = tb.collection_indexes.values()
    sources = {h.source for h in policies.rows()}
    assert sources == {
        "policies/hr/leave.docx",
        "policies/hr/remote.md",
        "policies/it/passwords.html",
        "policies/safety/handbook.pdf",
        "policies/safety/notice.png",
    }
    assert equipment.count() == 5  # one unit per CSV row
    again = {r.collection: r for r in tb.index()}
    assert again["policies"].unchanged == 5 and not again["policies"].changed
    assert again["equipment"].unchanged == 1 and again["equipment"].chunks_written == 0


def test_generated_tools_have_typed_filters_and_cards_that_pass_lint(corpus: Path) -> None:
    tb = Toolbox(_settings(corpus))
    policies = tb.tool("search_policies").metadata.fn_schema
    equipment = tb.tool("search_equipment").metadata.fn_schema
    assert policies is not None and equipment is not None
    props = policies.model_json_schema()["properties"]
    assert set(props) == {"query", "department", "start_effective", "end_effective"}
    assert props["start_effective"]["anyOf"][0]["format"] == "date"
    status = equipment.model_json_schema()["properties"]["status"]
    assert status["anyOf"][0]["enum"] == ["broken", "in_service"]  # the values seen
    cards = {c.name: c for c in tb.cards()}
    errors = [f for f in lint_cards(list(cards.values())) if f.severity == "error"]
    assert errors == []
    assert len(cards["search_policies"].examples) >= 5
    assert "Password Policy" in cards["search_policies"].holds
    qa = {t.metadata.get_name(): t for t in tb.tools(include_qa=True)}
    assert {"ask_policies", "ask_equipment"} <= set(qa)
    nodes = qa["ask_policies"].query_engine.retrieve("password length")  # type: ignore[attr-defined]
    assert nodes[0].node.metadata["file"] == "policies/it/passwords.html"


@pytest.mark.parametrize(
    ("question", "tool", "arguments", "expected_file", "fact"),
    [
        (
            "How many days of annual leave do HR policies give?",
            "search_policies",
            {"query": "annual leave days", "department": "HR"},
            "policies/hr/leave.docx",
            "27 days",
        ),
        (
            "How long must passwords be?",
            "search_policies",
            {"query": "password length", "department": "it"},
            "policies/it/passwords.html",
            "14 characters",
        ),
        (
            "When is the fire drill?",
            "search_policies",
            {"query": "fire drill"},
            "policies/safety/notice.png",
            "THURSDAY",
        ),
        (
            "Which policies took effect in 2025 about working from home?",
            "search_policies",
            {"query": "work from home", "start_effective": "2025-01-01"},
            "policies/hr/remote.md",
            "three days",
        ),
    ],
)
def test_the_agent_answers_through_the_generated_tools(
    corpus: Path,
    question: str,
    tool: str,
    arguments: dict[str, object],
    expected_file: str,
    fact: str,
) -> None:
    tb = Toolbox(_settings(corpus), llm=ScriptedLLM([react(tool, arguments), final(fact)]))
    answer = tb.ask(question)
    assert answer.tools_called == [tool]
    assert answer.sources[0].file == expected_file
    observed = "\n".join(m.content or "" for m in tb.llm.prompts[-1])  # type: ignore[attr-defined]
    assert fact in observed  # the tool's passage reached the model


def test_filters_narrow_rows_and_an_unknown_value_gets_the_closest(corpus: Path) -> None:
    tb = Toolbox(_settings(corpus))
    broken = tb.call("search_equipment", query="centrifuge", status="broken")
    assert broken.success and {r["doc_id"] for r in broken.data} == {
        "EQ-002",
        "EQ-005",
    }
    cheap = tb.call("search_equipment", query="microscope", max_price=5000)
    assert cheap.success and all(float(r["price"]) <= 5000 for r in cheap.data)
    assert "EQ-004" not in {r["doc_id"] for r in cheap.data}
    guessed = tb.call("search_policies", query="password length", department="security")
    assert guessed.success and guessed.data[0]["file"] == "policies/it/passwords.html"
    assert "(closest department:" in (guessed.suggestion or "")
    assert "The search ran without that filter." in (guessed.suggestion or "")
    assert "only repeated the filters" not in (broken.suggestion or "")
    # a query that only repeats its filters lists what they match, as no query does
    listed = tb.call("search_equipment", status="broken")
    repeated = tb.call("search_equipment", query="all broken equipment", status="broken")
    assert repeated.success and repeated.data == listed.data
    assert "only repeated the filters" in (repeated.suggestion or "")
    wrong_enum = tb.call("search_equipment", query="hood", status="lost")
    assert not wrong_enum.success and wrong_enum.error_code == "INVALID_ARGUMENT"
    swapped = tb.call(
        "search_policies", query="x", start_effective="2025-12-01", end_effective="2025-01-01"
    )
    assert not swapped.success and "Swap" in (swapped.suggestion or "")


def test_bad_files_are_one_line_each_and_nothing_indexed_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pypdf import PdfWriter

    root = make_corpus(tmp_path / "own")
    tb = Toolbox(_settings(root))
    tb.index()
    before = {h.id for h in tb.collection_indexes["policies"].rows()}
    bad = root / "policies" / "bad"
    bad.mkdir()
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt("secret")
    with (bad / "locked.pdf").open("wb") as f:
        writer.write(f)
    (bad / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    (bad / "program.exe").write_bytes(b"MZ\x90\x00")
    (bad / "late.md").write_text("---\neffective: next week\n---\nLate policy text.\n")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("A file outside the data folder.")
    (bad / "link.txt").symlink_to(outside)
    shutil.copy(root / "policies" / "safety" / "notice.png", bad / "scan.png")
    monkeypatch.setattr(readers, "tesseract_available", lambda: False)
    report = {r.collection: r for r in Toolbox(_settings(root)).index()}["policies"]
    lines = report.errors
    assert len(lines) == 6, lines

    def line(name: str) -> str:
        return next(x for x in lines if name in x)

    assert "encrypted" in line("locked.pdf") and "decrypt" in line("locked.pdf")
    assert "not a readable PDF" in line("broken.pdf")
    assert "unsupported file type .exe" in line("program.exe")
    assert "not a date" in line("late.md") and "indexed without it" in line("late.md")
    assert "outside the configured paths" in line("link.txt")
    assert "Tesseract" in line("scan.png")
    after = {h.id for h in Toolbox(_settings(root)).collection_indexes["policies"].rows()}
    assert before <= after  # nothing indexed before is lost
    assert any(i.startswith("policies/bad/late.md") for i in after)  # indexed without the date


def test_own_tools_and_a_clashing_collection_name(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "own")

    def count_instruments(room: str) -> int:
        """Count the instruments in one room of the lab.

        Use it when a question asks how many instruments a room holds. Returns the count.
        It does not list the instruments; use search_equipment for that.

        Args:
            room: The room, e.g. Lab 2.
        """
        return 3 if room else 0

    tool = FunctionTool.from_defaults(fn=count_instruments)
    tb = Toolbox(
        _settings(root),
        tools=[tool],
        llm=ScriptedLLM([react("count_instruments", {"room": "Lab 2"}), final("3")]),
    )
    tb.index()
    assert tb.call("count_instruments", room="Lab 2").data == 3
    assert "count_instruments" in {c.name for c in tb.cards()}
    assert tb.ask("How many instruments are in Lab 2?").tools_called == ["count_instruments"]
    assert tb.guard.audit.count(tool="count_instruments") >= 2  # every call is audited
    (root / "toolspecs" / "collections.yaml").write_text(
        (root / "toolspecs" / "collections.yaml")
        .read_text()
        .replace("name: policies", "name: policies\n    tool: count_instruments")
    )
    with pytest.raises(Exception, match="another tool has that name"):
        Toolbox(_settings(root), tools=[tool]).index()


def _cli(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRAG_")}
    clean.update(TEST_ENV)  # no background writer outliving the test; react for the scripts
    proc = subprocess.run(
        [sys.executable, "-m", "toolrag.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_init_then_index_then_ask_with_no_edit(tmp_path: Path) -> None:
    import json

    folder = make_corpus(tmp_path / "mine")
    shutil.rmtree(folder / "toolspecs")  # a plain folder of files
    found = _cli(folder, "init", ".")
    assert "policies" in found and "equipment" in found and "toolrag index" in found
    assert (folder / "toolrag.toml").is_file()
    indexed = _cli(folder, "index")
    assert "policies" in indexed and "equipment" in indexed
    # the description init wrote says only what kinds of files there are; the tool's also
    # names their titles, so the agent knows what they are about
    spec = yaml.safe_load((folder / "toolspecs" / "collections.yaml").read_text())
    assert {c["name"]: c.get("topics") for c in spec["collections"]}["policies"] == 12
    mine = Toolbox(
        Settings(
            data_dir=folder,
            index_dir=folder / ".toolrag" / "indexes",
            state_dir=folder / ".toolrag" / "state",
            toolspecs_dir=folder / "toolspecs",
            llm_provider="scripted",
        )
    )
    search = next(t for t in mine.tools() if t.metadata.get_name() == "search_policies")
    listed = search.metadata.description.split(" Its files include: ")[1]
    titles, total = mine.collection_indexes["policies"].titles()
    assert total == len(titles) >= 3 and listed == "; ".join(titles) + "."
    # a larger collection names a few, spread over it, and how many more there are
    assert mine.collection_indexes["policies"].titles(2) == ([titles[0], titles[total // 2]], total)
    for c in spec["collections"]:
        c["topics"] = 2
    (folder / "toolspecs" / "collections.yaml").write_text(yaml.safe_dump(spec))
    fewer = Toolbox(mine.settings)
    search = next(t for t in fewer.tools() if t.metadata.get_name() == "search_policies")
    named = f"{titles[0]}; {titles[total // 2]} (and {total - 2} more)."
    assert search.metadata.description.endswith(f" Its files include: {named}")
    turns = tmp_path / "turns.json"
    turns.write_text(
        json.dumps([react("search_policies", {"query": "password length"}), final("14")])
    )
    env = {"TOOLRAG_LLM_PROVIDER": "scripted", "TOOLRAG_SCRIPTED_TURNS_FILE": str(turns)}
    answer = json.loads(_cli(folder, "ask", "--json", "How long must passwords be?", env=env))
    assert [s["tool"] for s in answer["trace"]] == ["search_policies"]
    assert answer["sources"][0]["file"] == "policies/it/passwords.html"
