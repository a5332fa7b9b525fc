"""Blueprint sheets: PNG/JPEG/TIFF images whose title block is read back by OCR.

Follows the BlueprintExtractor of the design notes: the extractor reads the image (tesseract
through pytesseract), structures the title block into :class:`BlueprintSheet` metadata
(project, sheet number, discipline, title, revision date) and the plan notes into searchable
text. Nothing is taken from the file name: what the index knows is what the sheet shows.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from toolrag.content.loaders.base import Loader, Record
from toolrag.errors import IngestError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")

# Longest labels first so "PROJECT NO" is not read as "PROJECT".
_LABELS = {
    "PROJECT NO": "project",
    "PROJECT NAME": "project_name",
    "PROJECT": "project_name",
    "SHEET NO": "sheet_number",
    "SHEET": "sheet_number",
    "DISCIPLINE": "discipline",
    "TITLE": "title",
    "REVISION DATE": "revision_date",
    "REV DATE": "revision_date",
    "REVISION": "revision",
    "DRAWN BY": "drawn_by",
}
# A label at the start of a line, or anywhere in it when followed by a colon (whole-sheet OCR
# can glue a neighbouring text column in front of a title-block line).
_LABEL_RE = re.compile(
    r"(?:^\s*|\s)(" + "|".join(re.escape(k) for k in _LABELS) + r")\b\s*[:;]\s*(.+?)\s*$",
    re.IGNORECASE,
)
_DATE_RE = re.compile(r"(\d{4})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{1,2})")
_NOTES_RE = re.compile(r"GENERAL\s+NOTES", re.IGNORECASE)


class BlueprintSheet(BaseModel):
    """Structured metadata read from one blueprint image."""

    image_path: str
    project: str = Field("", description="Project number, e.g. GRB-101.")
    project_name: str = ""
    sheet_number: str = ""
    discipline: str = ""
    title: str = ""
    revision: str = ""
    revision_date: dt.date | None = None
    drawn_by: str = ""
    notes: list[str] = Field(default_factory=list)
    ocr_text: str = ""


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


def _normalise_code(value: str) -> str:
    """OCR reads O for 0 and l/I for 1 in codes such as ``GRB-1O1``; fix them in digit runs."""
    value = value.strip().strip(".,;:").upper().replace(" ", "")

    def fix(match: re.Match[str]) -> str:
        return match.group(0).translate(str.maketrans("OIL", "011"))

    return re.sub(r"(?<=[-\d])[\dOIL]+$", fix, value)


def parse_title_block(text: str) -> dict[str, str]:
    """Turn OCR lines of ``LABEL: value`` into a field dict (first occurrence wins)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = _LABEL_RE.search(line)
        if not match:
            continue
        key = _LABELS[re.sub(r"\s+", " ", match.group(1).upper())]
        fields.setdefault(key, match.group(2).strip())
    return fields


def parse_notes(text: str, max_notes: int = 6) -> list[str]:
    """Sentence-like lines (three words or more) after a 'GENERAL NOTES' heading."""
    match = _NOTES_RE.search(text)
    if not match:
        return []
    notes: list[str] = []
    for line in text[match.end() :].splitlines():
        line = re.sub(r"^\d+[.)]\s*", "", line.strip())
        if _LABEL_RE.search(line) or (line.isupper() and len(line.split()) < 3):
            continue  # title-block lines and headings interleave with notes in sparse OCR
        if len(line.split()) >= 3 and not line.upper().startswith("GRANITE"):
            notes.append(line)
        if len(notes) >= max_notes:
            break
    return notes


class BlueprintExtractor:
    """Extracts title-block metadata and plan notes from a blueprint image by OCR."""

    def __init__(self, psm: int = 6, sheet_psm: int = 11) -> None:
        if not tesseract_available():
            raise IngestError(
                "Blueprint ingestion needs the Tesseract OCR engine, which is not installed.",
                hint="Install it with `apt-get install tesseract-ocr` "
                "(or run `bash scripts/setup.sh`).",
            )
        self.psm = psm
        self.sheet_psm = sheet_psm
        # tesseract's own threading makes one small page 3-4x slower on a 2-core machine.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")

    def _ocr(self, image: object, psm: int | None = None) -> str:
        import pytesseract

        return str(pytesseract.image_to_string(image, config=f"--psm {psm or self.psm}"))

    def extract(self, path: Path) -> BlueprintSheet:
        from toolrag.content.readers import open_grayscale

        image = open_grayscale(path)
        width, height = image.size
        # Title blocks sit in the bottom-right corner of a sheet; read that first (fast, clean),
        # then the whole sheet for the plan notes and for any field the corner lacked.
        corner = image.crop((int(width * 0.5), int(height * 0.5), width, height))
        fields = parse_title_block(self._ocr(corner))
        full_text = self._ocr(image, psm=self.sheet_psm)  # sparse text: plans are not prose
        for key, value in parse_title_block(full_text).items():
            fields.setdefault(key, value)
        if not fields.get("sheet_number") or not fields.get("project"):
            raise IngestError(
                f"{path}: no title block found (need at least PROJECT NO and SHEET NO).",
                hint="Check that the sheet has a legible title block, then run `toolrag index`.",
            )
        date_match = _DATE_RE.search(fields.get("revision_date", ""))
        revision_date = None
        if date_match:
            try:
                revision_date = dt.date(*(int(g) for g in date_match.groups()))
            except ValueError:
                revision_date = None
        return BlueprintSheet(
            image_path=str(path),
            project=_normalise_code(fields["project"]),
            project_name=fields.get("project_name", "").upper(),
            sheet_number=_normalise_code(fields["sheet_number"]),
            discipline=fields.get("discipline", "").title(),
            title=fields.get("title", "").upper(),
            revision=fields.get("revision", "").strip(),
            revision_date=revision_date,
            drawn_by=fields.get("drawn_by", ""),
            notes=parse_notes(full_text),
            ocr_text=full_text,
        )


class BlueprintLoader(Loader):
    content_type = "blueprints"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._extractor: BlueprintExtractor | None = None

    def files(self) -> list[Path]:
        base = self.root / "blueprints"
        if not base.is_dir():
            return []
        return sorted(p for p in base.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)

    def load(self, path: Path) -> list[Record]:
        if self._extractor is None:
            self._extractor = BlueprintExtractor()
        sheet = self._extractor.extract(path)
        date = sheet.revision_date.isoformat() if sheet.revision_date else ""
        lines = [
            f"Blueprint sheet {sheet.sheet_number} ({sheet.discipline}): {sheet.title}.",
            f"Project {sheet.project} {sheet.project_name}.",
            f"Revision {sheet.revision} dated {date}." if date else "",
            f"Drawn by {sheet.drawn_by}." if sheet.drawn_by else "",
            ("Notes: " + "; ".join(sheet.notes) + ".") if sheet.notes else "",
            "Text on the sheet: " + " ".join(sheet.ocr_text.split())[:1500],
        ]
        return [
            Record(
                doc_id=f"{sheet.project}/{sheet.sheet_number}",
                text=" ".join(x for x in lines if x),
                title=sheet.title,
                project=sheet.project,
                project_name=sheet.project_name,
                doc_type="blueprint",
                date=date,
                sheet=sheet.sheet_number,
                discipline=sheet.discipline,
                extra={"revision": sheet.revision, "drawn_by": sheet.drawn_by},
            )
        ]
