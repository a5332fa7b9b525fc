"""Files into units of text: LlamaIndex's readers for every common format, OCR for images,
and one unit per CSV row or JSON record.

``read_units(path, "auto")`` reads PDF (a unit per page), DOCX, PPTX and EPUB through
``SimpleDirectoryReader`` with ``llama-index-readers-file``; Markdown and text directly (with
their YAML front matter); HTML as its visible text; CSV and JSON as text; PNG, JPEG and TIFF
through Tesseract. ``read_units(path, "rows")`` makes each CSV row or JSON/JSONL record a unit.
Every failure is an :class:`~toolrag.errors.IngestError` naming the file and the fix.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolrag.errors import IngestError

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".log"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
DATA_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".jsonl"})
READER_SUFFIXES = frozenset({".pdf", ".docx", ".pptx", ".epub"})
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff"})
SUPPORTED = TEXT_SUFFIXES | HTML_SUFFIXES | DATA_SUFFIXES | READER_SUFFIXES | IMAGE_SUFFIXES
MAX_FILE_BYTES = 64 * 1024 * 1024  # a bigger file is refused with a report line
MAX_ROWS = 200_000  # rows of one CSV or JSONL file read as units


@dataclass
class Unit:
    """One unit of a file before chunking: its text, an id suffix within the file (a page or
    a row; "" for the whole file) and the properties the reader found (title, dates,
    page_label, a row's columns, front matter keys under ``front_matter``)."""

    text: str
    part: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    front_matter: dict[str, Any] = field(default_factory=dict)


def supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED


def _fail(path: Path, what: str, fix: str) -> IngestError:
    return IngestError(f"{path}: {what}.", hint=fix)


def read_units(
    path: Path,
    reader: str = "auto",
    *,
    text_columns: list[str] | None = None,
    id_column: str | None = None,
    title_column: str | None = None,
) -> list[Unit]:
    """The units of one file (see the module docstring); raises IngestError when unusable."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise _fail(
            path,
            f"unsupported file type {suffix or '(none)'}",
            "Convert it to one of " + ", ".join(sorted(SUPPORTED)) + ", or narrow the "
            "collection's paths so they do not match it.",
        )
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _fail(
            path,
            f"{size:,} bytes is over the {MAX_FILE_BYTES:,}-byte limit of one file",
            "Split the file into smaller ones.",
        )
    if reader == "rows":
        if suffix not in DATA_SUFFIXES:
            raise _fail(
                path,
                "reader 'rows' reads CSV, TSV, JSON and JSONL files only",
                "Use reader: auto for this collection, or narrow its paths.",
            )
        return _rows(path, text_columns or [], id_column, title_column)
    if suffix in TEXT_SUFFIXES:
        return [_text_file(path)]
    if suffix in HTML_SUFFIXES:
        return [_html(path)]
    if suffix in DATA_SUFFIXES:
        return [Unit(text=_decode(path))]
    if suffix in IMAGE_SUFFIXES:
        return [_image(path)]
    return _llama_reader(path)


def _decode(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _fail(
            path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "Save the file as UTF-8."
        ) from exc


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """Split ``---\\nyaml\\n---\\nbody``; a file without front matter has empty metadata."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    meta = yaml.safe_load(text[3:end]) or {}
    if not isinstance(meta, dict):
        raise ValueError("front matter is not a mapping")
    return meta, text[end + 4 :].lstrip("\n")


def _text_file(path: Path) -> Unit:
    text = _decode(path)
    try:
        meta, body = split_front_matter(text)
    except ValueError as exc:
        raise _fail(
            path,
            f"its front matter is not a YAML mapping ({exc})",
            "Fix the YAML between the --- lines.",
        ) from exc
    except Exception as exc:  # yaml.YAMLError and its many subclasses
        raise _fail(
            path,
            f"its front matter is not valid YAML ({type(exc).__name__})",
            "Fix the YAML between the --- lines.",
        ) from exc
    meta = {str(k): v for k, v in meta.items()}
    props: dict[str, Any] = {}
    if meta.get("title"):
        props["title"] = str(meta["title"])
    return Unit(text=body, properties=props, front_matter=meta)


def _html(path: Path) -> Unit:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_decode(path), "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    body = soup.body or soup
    lines = [" ".join(line.split()) for line in body.get_text("\n").splitlines()]
    text = "\n".join(line for line in lines if line)
    return Unit(text=text, properties={"title": title} if title else {})


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


def _image(path: Path) -> Unit:
    if not tesseract_available():
        raise _fail(
            path,
            "images are read by OCR, and the Tesseract engine is not installed",
            "Install it (apt-get install tesseract-ocr, or bash scripts/setup.sh), "
            "or leave images out of the collection's paths.",
        )
    import pytesseract

    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    image = open_grayscale(path)
    words = pytesseract.image_to_data(image, config="--psm 6", output_type=pytesseract.Output.DICT)
    text = ocr_lines(words)
    if not text.strip():
        raise _fail(
            path,
            "OCR found no text in the image",
            "Check that the scan is legible (300 dpi or more).",
        )
    return Unit(text=text.strip())


OCR_MIN_CONFIDENCE = 60.0  # a line whose words average less is drawing noise, not text
_WORD = re.compile(r"[^\W_]{2,}")


def ocr_lines(words: dict[str, list[Any]]) -> str:
    """The text of Tesseract's ``image_to_data`` output, line by line, keeping a line only
    when its words' mean confidence reaches ``OCR_MIN_CONFIDENCE`` and it holds a word of two
    letters or digits. The lines of a drawing's linework ("‘oO ® © ® ©", "| |") go; a line of
    text keeps all its words, its less certain ones too ("DO NOT SCALE")."""
    lines: dict[tuple[int, int, int], list[tuple[str, float]]] = {}
    for i, word in enumerate(words.get("text") or []):
        if not str(word).strip():
            continue
        key = (int(words["block_num"][i]), int(words["par_num"][i]), int(words["line_num"][i]))
        lines.setdefault(key, []).append((str(word).strip(), float(words["conf"][i])))
    kept = []
    for line in lines.values():
        confidence = sum(c for _, c in line) / len(line)
        text = " ".join(w for w, _ in line)
        if confidence >= OCR_MIN_CONFIDENCE and _WORD.search(text):
            kept.append(text)
    return "\n".join(kept)


def open_grayscale(path: Path) -> Any:
    """The image at ``path`` in grayscale (a PIL image), or IngestError naming the fix."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as opened:
            opened.load()
            return opened.convert("L")
    except Image.DecompressionBombError as exc:
        raise _fail(
            path, "the image has too many pixels to read", "Scale it down below 90 megapixels."
        ) from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise _fail(
            path,
            f"not a readable image ({type(exc).__name__})",
            "Replace or remove the file, then run `toolrag index` again.",
        ) from exc


def _pdf_properties(pdf: Any) -> dict[str, Any]:
    """A PDF's document properties (``pdf``: a ``pypdf.PdfReader``): title, author, subject
    and its dates (ISO); none when its metadata cannot be read."""
    try:
        info: Any = pdf.metadata or {}
    except Exception:  # a broken info dictionary: the pages still read
        return {}
    props: dict[str, Any] = {}
    for key in ("title", "author", "subject"):
        value = info.get(f"/{key.title()}")
        if value:
            props[key] = str(value)
    for key, name in (("/CreationDate", "created"), ("/ModDate", "modified")):
        raw = str(info.get(key) or "")
        if raw.startswith("D:") and len(raw) >= 10 and raw[2:10].isdigit():
            props[name] = f"{raw[2:6]}-{raw[6:8]}-{raw[8:10]}"
    return props


def _llama_reader(path: Path) -> list[Unit]:
    from llama_index.core import SimpleDirectoryReader

    suffix = path.suffix.lower()
    props = _pdf_properties(_check_pdf(path)) if suffix == ".pdf" else {}
    try:
        documents = SimpleDirectoryReader(input_files=[path], raise_on_error=True).load_data()
    except ImportError as exc:
        raise _fail(
            path,
            f"its reader needs a package that is missing ({exc})",
            "Install toolrag with its readers: pip install -e .",
        ) from exc
    except Exception as exc:  # each format's reader raises its own kinds
        raise _fail(
            path,
            f"could not be read ({type(exc).__name__}: {str(exc)[:160]})",
            "Check that the file opens in its application; replace it if it is corrupt.",
        ) from exc
    units = []
    for n, doc in enumerate(documents):
        meta = {k: v for k, v in doc.metadata.items() if isinstance(v, str | int | float)}
        meta.update(props)
        part = f"p{meta['page_label']}" if "page_label" in meta else (str(n) if n else "")
        if doc.text.strip():
            units.append(Unit(text=doc.text, part=part, properties=meta))
    if not units:
        raise _fail(
            path,
            "no text could be read from it (a scan without a text layer?)",
            "OCR the file into a text PDF, or save its pages as PNG images.",
        )
    return units


def _check_pdf(path: Path) -> Any:
    """The opened ``pypdf.PdfReader``; encrypted and broken PDFs are refused with their own
    fix, before the page reader runs."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        pdf = PdfReader(str(path))
        encrypted = pdf.is_encrypted
    except (PdfReadError, OSError, ValueError, KeyError) as exc:
        raise _fail(
            path,
            f"not a readable PDF ({type(exc).__name__})",
            "Replace the file with an intact copy.",
        ) from exc
    if encrypted:
        raise _fail(
            path,
            "the PDF is encrypted",
            "Save a copy without a password (qpdf --decrypt), then index again.",
        )
    return pdf


def _rows(
    path: Path, text_columns: list[str], id_column: str | None, title_column: str | None
) -> list[Unit]:
    records = _records(path)
    units = []
    for n, row in enumerate(records):
        if text_columns:  # the values alone: "title\n\nbody"
            text = "\n\n".join(str(row[c]) for c in text_columns if row.get(c) not in (None, ""))
        else:  # a table's row: every column, labelled
            text = "\n".join(f"{c}: {v}" for c, v in row.items() if v not in (None, ""))
        if not text:
            continue
        ident = str(row.get(id_column) or "") if id_column else ""
        props: dict[str, Any] = {"columns": row}
        if ident:
            props["id"] = ident
        if title_column and row.get(title_column):
            props["title"] = str(row[title_column])
        units.append(Unit(text=text, part=ident or f"row{n + 1}", properties=props))
    return units


def _records(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    text = _decode(path)
    if suffix in (".csv", ".tsv"):
        try:
            dialect: Any = "excel-tab" if suffix == ".tsv" else csv.Sniffer().sniff(text[:4096])
        except csv.Error:
            dialect = "excel"
        reader = csv.DictReader(io.StringIO(text), dialect=dialect)
        rows = []
        for n, row in enumerate(reader):
            if n >= MAX_ROWS:
                break
            rows.append({str(k): v for k, v in row.items() if k is not None})
        return rows
    try:
        if suffix == ".jsonl":
            out = [json.loads(line) for line in text.splitlines()[:MAX_ROWS] if line.strip()]
        else:
            loaded = json.loads(text)
            out = loaded if isinstance(loaded, list) else [loaded]
    except json.JSONDecodeError as exc:
        raise _fail(
            path,
            f"not valid JSON (line {exc.lineno}: {exc.msg})",
            "Fix the JSON; JSONL needs one object per line.",
        ) from exc
    bad = next((i for i, r in enumerate(out) if not isinstance(r, dict)), None)
    if bad is not None:
        raise _fail(
            path, f"record {bad + 1} is not a JSON object", "Make each record an object of columns."
        )
    return [{str(k): _scalar(v) for k, v in r.items()} for r in out[:MAX_ROWS]]


def _scalar(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False)[:2000]
