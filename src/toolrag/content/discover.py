"""``toolrag init``: look at a folder and declare its collections.

A collection per top-level subfolder that holds readable files (and one for the files at the
top level): CSV and JSONL folders become ``reader: rows`` collections whose columns are
fields; other folders take their Markdown front matter keys as fields, and their subfolders
as a ``section`` path field. A field's type is what its values fit (date, number, enum for a
few distinct values, else keyword).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from toolrag.content.collection_spec import RESERVED, CollectionSpec, FieldSpec
from toolrag.content.fields import FieldValueError, coerce, parse_date
from toolrag.content.readers import SUPPORTED, _text_file

SKIP = frozenset({"toolspecs", "indexes", "state", "node_modules", "__pycache__", "venv"})
MAX_FILES_LOOKED_AT = 2_000
MAX_ROWS_LOOKED_AT = 500
ENUM_MAX = 12
TOPICS = 12  # document titles an init'd files collection's description names (its ``topics``)


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not slug or not slug[0].isalpha():
        slug = f"c_{slug}".rstrip("_")
    return slug[:40]


def _field_name(name: str) -> str | None:
    slug = _slug(name)[:30]
    return None if slug in RESERVED else slug


def _infer_type(values: list[Any]) -> str:
    present = [v for v in values if v not in (None, "")]
    if not present:
        return "keyword"
    for kind in ("date", "number"):
        probe = FieldSpec(name="probe", type=kind, source="column:probe")
        try:
            for v in present:
                if kind == "date":
                    parse_date(v)
                else:
                    coerce(probe, v)
            if kind == "date" and all(isinstance(v, int | float) for v in present):
                continue  # numbers are not dates
            return kind
        except (FieldValueError, TypeError):
            continue
    distinct = {str(v).strip().lower() for v in present}
    if len(distinct) <= ENUM_MAX and len(distinct) < max(2, len(present)):
        return "enum"
    return "keyword"


def _files(folder: Path, recursive: bool) -> list[Path]:
    pattern = folder.rglob("*") if recursive else folder.glob("*")
    out = []
    for path in pattern:
        rel = path.relative_to(folder).parts
        if any(p.startswith(".") or p in SKIP for p in rel) or not path.is_file():
            continue
        if path.suffix.lower() in SUPPORTED:
            out.append(path)
        if len(out) >= MAX_FILES_LOOKED_AT:
            break
    return sorted(out)


def _rows_collection(name: str, folder: str, files: list[Path]) -> CollectionSpec:
    rows: list[dict[str, Any]] = []
    for path in files:
        if path.suffix.lower() == ".csv":
            with path.open(encoding="utf-8-sig", newline="") as f:
                for n, row in enumerate(csv.DictReader(f)):
                    if n >= MAX_ROWS_LOOKED_AT:
                        break
                    rows.append(row)
        else:
            import json

            for line in path.read_text(encoding="utf-8").splitlines()[:MAX_ROWS_LOOKED_AT]:
                if line.strip():
                    record = json.loads(line)
                    if isinstance(record, dict):
                        rows.append(record)
    columns = list(dict.fromkeys(k for r in rows for k in r if k))
    fields, id_column, title_column = [], None, None
    for column in columns:
        values = [r.get(column) for r in rows]
        unique = len({str(v) for v in values}) == len(values)
        if id_column is None and unique and ("id" in column.lower() or column == columns[0]):
            id_column = column
            continue
        kind = _infer_type(values)
        if title_column is None and kind == "keyword" and unique:
            title_column = column
            continue
        field = _field_name(column)
        if field and kind != "keyword":
            fields.append(FieldSpec(name=field, type=kind, source=f"column:{column}"))
    suffixes = sorted({p.suffix.lower() for p in files})
    return CollectionSpec(
        name=name,
        description=f"The records of {folder}: one unit per row of its "
        + ", ".join(s.lstrip(".").upper() for s in suffixes)
        + " files.",
        paths=[f"{folder}/**/*{s}" for s in suffixes],
        reader="rows",
        id_column=id_column,
        title_column=title_column,
        fields=fields,
        filters=[f.name for f in fields],
    )


def _files_collection(name: str, folder: str, root: Path, files: list[Path]) -> CollectionSpec:
    meta: dict[str, list[Any]] = {}
    for path in files:
        if path.suffix.lower() in (".md", ".markdown"):
            try:
                unit = _text_file(path)
            except Exception:  # the index reports it with its fix
                continue
            for key, value in unit.front_matter.items():
                meta.setdefault(key, []).append(value)
    fields: list[FieldSpec] = []
    for key, values in meta.items():
        field = _field_name(key)
        if field is None or key == "title" or any(isinstance(v, list | dict) for v in values):
            continue
        kind = _infer_type(values)
        fields.append(FieldSpec(name=field, type=kind, source=f"front_matter:{key}"))
    base = root / folder if folder else root
    sections = {p.relative_to(base).parts[0] for p in files if len(p.relative_to(base).parts) > 1}
    if len(sections) > 1 and "section" not in {f.name for f in fields}:
        prefix = f"{folder}/" if folder else ""
        fields.append(
            FieldSpec(name="section", type="keyword", source=f"path:{prefix}{{section}}/**")
        )
    kinds = Counter(p.suffix.lower().lstrip(".").upper() for p in files)
    listing = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    where = f"the {folder} folder" if folder else "the top folder"
    return CollectionSpec(
        name=name,
        description=f"The files of {where} ({listing}).",
        topics=TOPICS,
        paths=[f"{folder}/**/*"] if folder else sorted({f"*{p.suffix}" for p in files}),
        fields=fields,
        filters=[f.name for f in fields if f.type != "keyword" or f.kind == "path"],
    )


def discover(root: Path) -> list[CollectionSpec]:
    """The collections :mod:`toolrag.content.discover` finds under ``root``."""
    specs = []
    top = _files(root, recursive=False)
    if top:
        specs.append(_files_collection("files", "", root, top))
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name.startswith(".") or folder.name in SKIP:
            continue
        files = _files(folder, recursive=True)
        if not files:
            continue
        name = _slug(folder.name)
        if name in {s.name for s in specs}:
            name = f"{name}_{len(specs)}"
        if all(p.suffix.lower() in (".csv", ".jsonl") for p in files):
            specs.append(_rows_collection(name, folder.name, files))
        else:
            specs.append(_files_collection(name, folder.name, root, files))
    return specs


def collections_yaml(specs: list[CollectionSpec]) -> str:
    data = {
        "collections": [
            s.model_dump(mode="json", exclude_defaults=True, exclude={"chunking"}) for s in specs
        ]
    }
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


TOML = """\
# Written by `toolrag init`. Paths are relative to this folder: run toolrag from here.
data_dir = "."
index_dir = ".toolrag/indexes"
state_dir = ".toolrag/state"
toolspecs_dir = "toolspecs"
# this folder's collections are in toolspecs/collections.yaml
"""
