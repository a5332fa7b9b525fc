"""Blueprint ingestion reads the title block back by OCR, as the generator drew it."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
import yaml

from toolrag.content.loaders import blueprints
from toolrag.content.loaders.blueprints import BlueprintExtractor, BlueprintLoader
from toolrag.errors import IngestError

from ..conftest import DATA

SHEETS = yaml.safe_load((DATA / "blueprints" / "sheets.yaml").read_text())


@pytest.mark.parametrize("sheet", SHEETS[:: max(1, len(SHEETS) // 4)][:4], ids=lambda s: s["file"])
def test_ocr_matches_what_the_generator_drew(sheet: dict[str, object]) -> None:
    got = BlueprintExtractor().extract(DATA / "blueprints" / str(sheet["file"]))
    assert got.project == sheet["project"]
    assert got.sheet_number == sheet["sheet_number"]
    assert got.discipline.lower() == str(sheet["discipline"]).lower()
    assert got.title == sheet["title"]
    assert got.revision == str(sheet["revision"])
    assert got.revision_date == dt.date.fromisoformat(str(sheet["revision_date"]))
    assert got.project_name == str(sheet["project_name"]).upper()


def test_drawings_are_reproducible_from_the_committed_script(tmp_path: Path) -> None:
    """The committed script redraws a sheet that OCR reads back identically."""
    import subprocess
    import sys

    first = SHEETS[0]
    subprocess.run(
        [
            sys.executable,
            str(DATA.parent / "scripts" / "draw_blueprints.py"),
            "--out",
            str(tmp_path),
            "--only",
            first["file"],
        ],
        check=True,
    )
    got = BlueprintExtractor().extract(tmp_path / first["file"])
    assert (got.sheet_number, got.title) == (first["sheet_number"], first["title"])


def test_corrupt_image_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "blueprints" / "broken.png"
    bad.parent.mkdir()
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 50)
    with pytest.raises(IngestError) as exc:
        BlueprintLoader(tmp_path).load(bad)
    message = str(exc.value)
    assert "broken.png" in message and "toolrag index" in message and "\n" not in message


def test_image_without_title_block(tmp_path: Path) -> None:
    from PIL import Image

    blank = tmp_path / "blank.png"
    Image.new("L", (600, 400), 255).save(blank)
    with pytest.raises(IngestError, match="no title block"):
        BlueprintExtractor().extract(blank)


def test_missing_tesseract_stops_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blueprints.shutil, "which", lambda name: None)
    with pytest.raises(IngestError, match="apt-get install tesseract-ocr"):
        BlueprintExtractor()


def test_index_reports_corrupt_image_and_keeps_the_rest(tmp_path: Path) -> None:
    from toolrag import Settings, Toolbox

    data = tmp_path / "data"
    (data / "blueprints").mkdir(parents=True)
    shutil.copy(DATA / "blueprints" / SHEETS[0]["file"], data / "blueprints")
    (data / "blueprints" / "zz-corrupt.png").write_bytes(b"not an image")
    tb = Toolbox(Settings(data_dir=data, index_dir=tmp_path / "ix"))
    report = tb.index(content_types=["blueprints"])[0]
    assert len(report.added) == 1 and len(report.errors) == 1
    assert "zz-corrupt.png" in report.errors[0]
