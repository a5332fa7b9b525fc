"""The sample's blueprint scans read by OCR and the ``blueprints`` collection's declared
title-block patterns (``toolspecs/collections.yaml``), as the generator drew them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from toolrag.content import readers
from toolrag.content.collection_index import CollectionLoader
from toolrag.content.collection_spec import CollectionSpec, load_collections
from toolrag.errors import IngestError

from ..conftest import DATA, REPO

SHEETS = yaml.safe_load((DATA / "blueprints" / "sheets.yaml").read_text())
BLUEPRINTS = next(c for c in load_collections(REPO / "toolspecs" / "collections.yaml")
                  if c.name == "blueprints")  # fmt: skip


def _loader(root: Path, spec: CollectionSpec = BLUEPRINTS) -> CollectionLoader:
    return CollectionLoader(root, spec, REPO / "toolspecs")


def _fields(loader: CollectionLoader, path: Path) -> dict[str, object]:
    (record,) = loader.load(path)
    assert not loader.problems, loader.problems
    return {k: json.loads(v) for k, v in record.extra.items()}


@pytest.mark.parametrize("sheet", SHEETS[:: max(1, len(SHEETS) // 4)][:4], ids=lambda s: s["file"])
def test_ocr_matches_what_the_generator_drew(sheet: dict[str, object]) -> None:
    got = _fields(_loader(DATA), DATA / "blueprints" / str(sheet["file"]))
    assert got == {
        "project": sheet["project"],
        "sheet": sheet["sheet_number"],
        "sheet_title": sheet["title"],
        "discipline": str(sheet["discipline"]).upper(),
        "revision": str(sheet["revision"]),
        "date": str(sheet["revision_date"]),
    }


def test_drawings_are_reproducible_from_the_committed_script(tmp_path: Path) -> None:
    """The committed script redraws a sheet that OCR reads back identically."""
    import subprocess
    import sys

    first = SHEETS[0]
    subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "draw_blueprints.py"),
            "--out",
            str(tmp_path / "blueprints"),
            "--only",
            first["file"],
        ],
        check=True,
    )
    got = _fields(_loader(tmp_path), tmp_path / "blueprints" / first["file"])
    assert (got["sheet"], got["sheet_title"]) == (first["sheet_number"], first["title"])


def test_corrupt_image_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "blueprints" / "broken.png"
    bad.parent.mkdir()
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 50)
    with pytest.raises(IngestError) as exc:
        _loader(tmp_path).load(bad)
    message = exc.value.one_line()
    assert "broken.png" in message and "\n" not in message


def test_an_image_without_text_is_a_one_line_error(tmp_path: Path) -> None:
    from PIL import Image

    blank = tmp_path / "blueprints" / "blank.png"
    blank.parent.mkdir()
    Image.new("L", (600, 400), 255).save(blank)
    with pytest.raises(IngestError, match="no text"):
        _loader(tmp_path).load(blank)


def test_missing_tesseract_stops_with_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(readers.shutil, "which", lambda name: None)
    sheet = DATA / "blueprints" / SHEETS[0]["file"]
    with pytest.raises(IngestError) as exc:
        _loader(DATA).load(sheet)
    assert "apt-get install tesseract-ocr" in exc.value.one_line()


def test_index_reports_corrupt_image_and_keeps_the_rest(tmp_path: Path) -> None:
    from toolrag import Settings, Toolbox

    data = tmp_path / "data"
    (data / "blueprints").mkdir(parents=True)
    shutil.copy(DATA / "blueprints" / SHEETS[0]["file"], data / "blueprints")
    (data / "blueprints" / "zz-corrupt.png").write_bytes(b"not an image")
    tb = Toolbox(Settings(data_dir=data, index_dir=tmp_path / "ix", state_dir=tmp_path / "st"))
    report = tb.index(collections=["blueprints"])[0]
    assert len(report.added) == 1 and len(report.errors) == 1
    assert "zz-corrupt.png" in report.errors[0]
