"""A small folder of a user's own files, of every kind a collection reads, written by code:
a text PDF, a DOCX, an HTML page, a Markdown file with front matter, a PNG scan with printed
text, and a CSV register. Shared by the collection tests and ``benchmarks/ingest.py``."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

COLLECTIONS_YAML = """\
collections:
  - name: policies
    description: The staff policies and handbooks of Acme Labs, by department.
    paths: ["policies/**/*"]
    fields:
      - {name: department, type: keyword, source: "path:{department}/*"}
      - {name: effective, type: date, source: "front_matter:effective"}
    filters: [department, effective]
  - name: equipment
    description: The lab equipment register of Acme Labs, one row per instrument.
    paths: ["equipment/*.csv"]
    reader: rows
    id_column: asset
    title_column: name
    fields:
      - {name: status, type: enum, source: "column:status"}
      - {name: price, type: number, source: "column:price"}
    filters: [status, price]
"""

EQUIPMENT = [
    {"asset": "EQ-001", "name": "Benchtop centrifuge", "status": "in_service", "price": "4200",
     "room": "Lab 2"},
    {"asset": "EQ-002", "name": "Floor centrifuge", "status": "broken", "price": "18500",
     "room": "Lab 4"},
    {"asset": "EQ-003", "name": "Stereo microscope", "status": "in_service", "price": "3100",
     "room": "Lab 1"},
    {"asset": "EQ-004", "name": "Confocal microscope", "status": "in_service",
     "price": "250000", "room": "Imaging suite"},
    {"asset": "EQ-005", "name": "Fume hood", "status": "broken", "price": "9800",
     "room": "Lab 3"},
]  # fmt: skip


def corpus_settings(root: Path, **overrides: Any) -> Any:
    """Settings for a toolbox over the folder alone: its collections, no sample content."""
    from toolrag import Settings

    values: dict[str, Any] = {
        "data_dir": root,
        "index_dir": root / "indexes",
        "state_dir": root / "state",
        "toolspecs_dir": root / "toolspecs",
        "llm_provider": "scripted",
    }
    return Settings(**{**values, **overrides})


def font_path() -> str:
    """A TrueType font that ships with matplotlib (no system fonts needed)."""
    import matplotlib

    return os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")


def write_pdf(path: Path, title: str, lines: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"pdf.fonttype": 42}):  # TrueType: the text layer is extractable
        fig = plt.figure(figsize=(8.5, 11))
        fig.text(0.08, 0.92, title, fontsize=16)
        for n, line in enumerate(lines):
            fig.text(0.08, 0.86 - 0.03 * n, line, fontsize=10)
        fig.savefig(path, metadata={"Title": title})
        plt.close(fig)


def write_docx(path: Path, title: str, paragraphs: list[str]) -> None:
    import docx

    document = docx.Document()
    document.add_heading(title, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))


def write_scan(path: Path, lines: list[str]) -> None:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), 28)
    image = Image.new("L", (1300, 80 + 60 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for n, line in enumerate(lines):
        draw.text((40, 40 + 60 * n), line, font=font, fill=0)
    image.save(path)


def make_corpus(root: Path) -> Path:
    """Write the folder under ``root`` (data files and ``toolspecs/collections.yaml``)."""
    (root / "policies" / "safety").mkdir(parents=True, exist_ok=True)
    (root / "policies" / "hr").mkdir(parents=True, exist_ok=True)
    (root / "policies" / "it").mkdir(parents=True, exist_ok=True)
    (root / "equipment").mkdir(parents=True, exist_ok=True)
    write_pdf(
        root / "policies" / "safety" / "handbook.pdf",
        "Laboratory Safety Handbook",
        [
            "Safety goggles must be worn in every wet lab at all times.",
            "Chemical spills are reported to the safety officer within one hour.",
            "Waste solvents go into the red cans in the corridor.",
        ],
    )
    write_docx(
        root / "policies" / "hr" / "leave.docx",
        "Annual Leave Policy",
        [
            "Every full-time employee has 27 days of annual leave per calendar year.",
            "Up to 5 unused days may be carried over to the next year.",
        ],
    )
    (root / "policies" / "it" / "passwords.html").write_text(
        "<html><head><title>Password Policy</title><style>p{color:red}</style></head><body>"
        "<h1>Password Policy</h1><p>Passwords must be at least 14 characters long.</p>"
        "<p>Passwords are changed when a breach is suspected, not on a schedule.</p>"
        "<script>var hidden = 'not text';</script></body></html>",
        encoding="utf-8",
    )
    (root / "policies" / "hr" / "remote.md").write_text(
        "---\ntitle: Remote Work Policy\neffective: 2025-03-01\n---\n# Remote Work Policy\n\n"
        "Staff may work from home up to three days per week with their manager's consent.\n",
        encoding="utf-8",
    )
    write_scan(
        root / "policies" / "safety" / "notice.png",
        ["NOTICE: FIRE DRILL EVERY THURSDAY AT 10:00", "Assemble at the north car park."],
    )
    with (root / "equipment" / "register.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(EQUIPMENT[0]))
        writer.writeheader()
        writer.writerows(EQUIPMENT)
    (root / "toolspecs").mkdir(exist_ok=True)
    (root / "toolspecs" / "collections.yaml").write_text(COLLECTIONS_YAML, encoding="utf-8")
    return root
