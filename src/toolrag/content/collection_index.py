"""A declared collection's files, read into records, in their own LanceDB table.

:class:`CollectionLoader` finds the files of a :class:`CollectionSpec` (its globs under the
data folder, or absolute) and reads each into records with :mod:`toolrag.content.readers` and
the declared fields (:mod:`toolrag.content.fields`). :class:`CollectionIndex` is a
:class:`~toolrag.content.index.ContentIndex` whose metadata columns are those fields (strings,
ISO dates, numbers), so it syncs incrementally with stable ids and searches hybrid like the
others; :class:`FieldFilters` writes its prefilter from validated typed values.
"""

from __future__ import annotations

import glob
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import BaseModel, Field

from toolrag.content.aliases import KeywordValues, load_aliases
from toolrag.content.collection_spec import CollectionSpec, VectorMode
from toolrag.content.fields import (
    FieldValueError,
    coerce,
    days_between,
    days_text,
    raw_value,
)
from toolrag.content.fusion import DEFAULT_FUSION, FusionMode
from toolrag.content.index import BuildRows, ContentIndex, Hit, ProgressFn, SyncReport
from toolrag.content.readers import Unit, read_units
from toolrag.content.records import Loader, Record

MAX_FILES = 100_000  # files of one collection; more is refused with a report line


class CollectionLoader(Loader):
    """The files of one collection and their records. Problems that do not stop a file
    (a field value that fails its type, a link out of the configured paths) are kept in
    :attr:`problems`, one line each, for the index report."""

    def __init__(self, root: Path, spec: CollectionSpec, toolspecs_dir: Path | None = None) -> None:
        """``toolspecs_dir``: where relative alias files are (the toolspecs folder)."""
        super().__init__(root)
        self.spec = spec
        self.chunked = spec.chunking.size > 0
        self.problems: list[str] = []
        # a keyword field with an alias file stores the file's value for what a file names
        self.aliases = {
            f.name: KeywordValues([], load_aliases(path))
            for f in spec.fields
            if f.type == "keyword" and (path := f.alias_file(toolspecs_dir)) is not None
        }
        # a change of the declared reader or fields re-reads every file
        self.version = hashlib.sha1(
            (
                spec.model_dump_json(
                    include={
                        "reader",
                        "text_columns",
                        "id_column",
                        "title_column",
                        "title_field",
                        "fields",
                    }
                )
                + self._alias_digest()
            ).encode()
        ).hexdigest()[:10]

    def _bases(self) -> list[Path]:
        """The folders a collection's files must stay within: the data folder and the fixed
        part of each absolute glob."""
        bases = [self.root.resolve()]
        for pattern in self.spec.paths:
            if Path(pattern).is_absolute():
                fixed = [p for p in Path(pattern).parts if not any(c in p for c in "*?[")]
                bases.append(Path(*fixed).resolve() if fixed else Path("/"))
        return bases

    def files(self) -> list[Path]:
        found: set[Path] = set()
        bases = self._bases()
        for pattern in self.spec.paths:
            full = pattern if Path(pattern).is_absolute() else str(self.root / pattern)
            for name in glob.iglob(full, recursive=True):
                path = Path(name)
                if not path.is_file() or path.name.startswith("."):
                    continue
                real = path.resolve()
                if not any(real.is_relative_to(b) for b in bases):
                    self.problems.append(
                        f"{path}: links to {real}, outside the configured paths; skipped. "
                        "Copy the file into the data folder, or add its folder to paths."
                    )
                    continue
                found.add(path)
                if len(found) > MAX_FILES:
                    self.problems.append(
                        f"{self.spec.name}: over {MAX_FILES:,} files match its paths; the rest "
                        "are skipped. Split it into several collections."
                    )
                    return sorted(found)
        return sorted(found)

    def source_id(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.resolve().as_posix()

    def load(self, path: Path) -> list[Record]:
        spec = self.spec
        units = read_units(
            path,
            spec.reader,
            text_columns=spec.text_columns,
            id_column=spec.id_column,
            title_column=spec.title_column,
        )
        source = self.source_id(path)
        return [self._record(source, path, unit) for unit in units]

    def _record(self, source: str, path: Path, unit: Unit) -> Record:
        values: dict[str, str | float] = {}
        for spec in self.spec.fields:
            try:
                value = coerce(spec, raw_value(spec, unit, source))
            except FieldValueError as exc:
                self.problems.append(
                    f"{path}: field {spec.name} ({spec.type}): {exc}; indexed without it. "
                    f"Fix the value in the file or the field's source ({spec.source})."
                )
                continue
            if value is not None and spec.name in self.aliases:
                value = self._canonical(path, spec.name, str(value))
            if value is not None:
                values[spec.name] = value
        for spec in self.spec.fields:  # computed from the values read above
            if spec.between and (days := days_between(spec, values)) is not None:
                values[spec.name] = float(days)
        props = unit.properties
        named = values.get(self.spec.title_field) if self.spec.title_field else None
        title = str(named or props.get("title") or _first_line(unit.text) or path.stem)
        # a row's own id (its id_column) names it; else the file, and the page or row
        doc_id = str(props.get("id") or (f"{source}#{unit.part}" if unit.part else source))
        extra = {name: json.dumps(value) for name, value in values.items()}
        return Record(doc_id=doc_id, text=unit.text, title=title[:300], extra=extra)

    def _canonical(self, path: Path, field: str, value: str) -> str:
        """The alias file's value that ``value`` names; ``value`` itself, with a report
        line, when the file names none."""
        resolved = self.aliases[field].resolve(value)
        if resolved is None:
            self.problems.append(
                f"{path}: field {field}: {value!r} is not a value or name in its alias file; "
                "indexed as read. Add it to the alias file, or fix the field's source."
            )
        return resolved or value

    # loader version: alias files take part in what a field's value is
    def _alias_digest(self) -> str:
        return json.dumps({k: v.names for k, v in sorted(self.aliases.items())}, sort_keys=True)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:120]
    return ""


class FieldFilters(BaseModel):
    """Typed filter values of one collection: equality on keyword and enum fields (case
    insensitive), ranges on date and number fields. Values reach SQL only as quoted
    literals or floats."""

    equals: dict[str, str] = Field(default_factory=dict)
    ranges: dict[str, tuple[str | float | None, str | float | None]] = Field(default_factory=dict)

    def where(self) -> str | None:
        clauses = []
        for column, value in sorted(self.equals.items()):
            clauses.append(f"lower({column}) = {_quote(value.lower())}")
        for column, (low, high) in sorted(self.ranges.items()):
            if low is not None:
                clauses.append(f"{column} >= {_literal(low)}")
            if high is not None:
                clauses.append(f"{column} <= {_literal(high)}")
            if low is not None or high is not None:
                clauses.append(f"{column} IS NOT NULL")
        return " AND ".join(clauses) or None


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _literal(value: str | float) -> str:
    return repr(float(value)) if isinstance(value, float | int) else _quote(str(value))


class CollectionIndex(ContentIndex):
    """The LanceDB table ``collection_<name>`` of one declared collection."""

    def __init__(
        self,
        index_dir: Path,
        spec: CollectionSpec,
        embed: BaseEmbedding,
        toolspecs_dir: Path | None = None,
        fusion: FusionMode = DEFAULT_FUSION,
        vectors: VectorMode | None = None,
    ) -> None:
        """``toolspecs_dir``: where the fields' relative alias files are; ``fusion``: how
        hybrid search weighs dense and BM25; ``vectors``: how a chunk is embedded, by default
        as the spec's ``chunking.vectors`` says (:class:`ContentIndex`)."""
        size = spec.chunking.size or 512
        super().__init__(
            index_dir,
            spec.name,
            embed,
            chunk_size=size,
            chunk_overlap=spec.chunking.overlap,
            table_name=spec.table,
            fusion=fusion,
            vectors=vectors or spec.chunking.vectors,
        )
        self.spec = spec
        self.toolspecs_dir = toolspecs_dir

    def loader(self, data_dir: Path) -> CollectionLoader:
        return CollectionLoader(data_dir, self.spec, self.toolspecs_dir)

    def sync(
        self,
        loader: Loader,
        progress: ProgressFn | None = None,
        build_rows: BuildRows | None = None,
    ) -> SyncReport:
        report = super().sync(loader, progress, build_rows)
        if isinstance(loader, CollectionLoader):
            report.errors += loader.problems
        return report

    def _metadata_fields(self) -> list[pa.Field]:
        return [
            pa.field(f.name, pa.float64() if f.type == "number" else pa.string())
            for f in self.spec.fields
        ]

    def _metadata(self, record: Record) -> dict[str, Any]:
        row: dict[str, Any] = {"doc_id": record.doc_id, "title": record.title}
        for f in self.spec.fields:
            raw = record.extra.get(f.name)
            row[f.name] = None if raw is None else json.loads(raw)
        return row

    def _hit(self, row: dict[str, Any], score: float, similarity: float | None) -> Hit:
        values = {f.name: row.get(f.name) for f in self.spec.fields}
        for f in self.spec.fields:  # a days_between value in words, not only a number
            value = values[f.name]
            if f.between and isinstance(value, int | float):
                values[f.name] = days_text(f, value)
        return Hit.from_row(row, score, similarity, values)

    def seen(self, field: str, limit: int = 1_000) -> list[str]:
        """The distinct values of a keyword or enum field in the table, sorted."""
        values = self.distinct(field)
        return values[:limit]
