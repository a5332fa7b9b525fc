"""Content indexes: one LanceDB table per collection, synced incrementally, searched hybrid.

Why LanceDB directly rather than ``LanceDBVectorStore``: the wrapper's filters (NE, NIN, nested
filters, empty matches), ``delete_ref_doc`` quoting and placeholder hybrid scores are broken in
the pinned stack (see docs/stack-traps.md). The table here has fixed columns plus a subclass's
metadata columns, stable row ids (``source#chunk``), prefiltered SQL ``where`` clauses built
only from validated values, and a reciprocal-rank fusion of real cosine and BM25 rankings.
LlamaIndex sees it through :class:`toolrag.content.retrievers.ContentRetriever`, a
``BaseRetriever``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import lancedb
import pyarrow as pa
from lancedb.index import FTS
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter
from pydantic import BaseModel, Field

from toolrag.content.collection_spec import DEFAULT_VECTORS, VectorMode
from toolrag.content.fusion import (
    CALIBRATION_RULE,
    DEFAULT_FUSION,
    FusionMode,
    FusionWeights,
    calibrate,
)
from toolrag.content.records import Loader, Record, file_sha256
from toolrag.errors import IndexMissingError, IngestError, ToolragError
from toolrag.locks import writer_lock
from toolrag.models.embeddings import whole_text_embeddings
from toolrag.rank_fusion import reciprocal_rank_fusion

SearchMode = Literal["hybrid", "dense", "bm25"]

_BASE_TEXT = ("id", "source", "source_hash", "doc_id", "title")
OUTLINE_MAX = 500
# a Markdown heading's line, its trailing spaces stripped after the match: ``(.+?)\s*$`` was
# quadratic in a run of spaces inside a heading (0.16 s for one line of 4,000 characters)
_HEADING = re.compile(r"^#{1,4}\s++(.+)", re.MULTILINE)
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.)\s+")  # "2.1 ", "3. ", "A. "


def headings(text: str) -> list[str]:
    """The Markdown headings of ``text`` (``#`` to ``####``), trailing spaces stripped; linear
    in the length of ``text``."""
    return [h.rstrip() for h in _HEADING.findall(text)]


class Filters(Protocol):
    """Validated filters that write their own SQL ``where`` clause (None: no filter)."""

    def where(self) -> str | None: ...


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class Hit(BaseModel):
    """One retrieved passage with where it came from."""

    id: str
    doc_id: str
    text: str
    source: str = Field(description="Source file, relative to the data folder.")
    score: float = Field(description="Fused relevance (RRF) or cosine similarity.")
    similarity: float | None = Field(None, description="Cosine similarity to the query.")
    title: str = ""
    chunk: int = 0
    extra: dict[str, str] = Field(
        default_factory=dict, description="The unit's field values, as text, by field name."
    )

    @classmethod
    def from_row(
        cls,
        row: dict[str, Any],
        score: float,
        similarity: float | None,
        values: dict[str, Any] | None = None,
    ) -> Hit:
        """A table row as a hit; ``values``: its field values (default: the row's ``extra``
        column, each value JSON-encoded as :class:`~toolrag.content.records.Record` keeps it)."""
        if values is None:
            values = {k: json.loads(v) for k, v in json.loads(row.get("extra") or "{}").items()}
        return cls(
            id=row["id"],
            doc_id=row.get("doc_id") or "",
            text=row.get("text") or "",
            source=row.get("source") or "",
            title=row.get("title") or "",
            chunk=int(row.get("chunk") or 0),
            extra={k: field_text(v) for k, v in values.items() if v is not None},
            score=round(score, 6),
            similarity=None if similarity is None else round(similarity, 4),
        )


def field_text(value: Any) -> str:
    """A field value as a result shows it: a whole number without ``.0``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class SyncReport(BaseModel):
    collection: str
    added: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    unchanged: int = 0
    chunks_written: int = 0
    rows_total: int = 0
    errors: list[str] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)


ProgressFn = Callable[[str, int, int], None]


@dataclass
class FileRows:
    """The rows of one changed file, or the report line saying why it has none."""

    source: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)  # problems that did not stop the file


#: (source, path, digest) of the changed files and their loader -> each file's rows
BuildRows = Callable[[Sequence[tuple[str, Path, str]], Loader], Iterator[FileRows]]


class ContentIndex:
    """The LanceDB table ``name`` under ``index_dir``: each unit's text, chunked and embedded,
    with its id, title, file and field values (JSON in ``extra``).

    Subclasses with metadata columns to filter on (:class:`toolrag.content.collection_index.
    CollectionIndex`) override :meth:`_metadata_fields`, :meth:`_metadata` and :meth:`_hit`.
    """

    def __init__(
        self,
        index_dir: Path,
        name: str,
        embed: BaseEmbedding,
        chunk_size: int = 200,
        chunk_overlap: int = 30,
        table_name: str | None = None,
        fusion: FusionMode = DEFAULT_FUSION,
        vectors: VectorMode = DEFAULT_VECTORS,
    ) -> None:
        self.index_dir = index_dir
        self.fusion = fusion
        self.vectors = vectors
        self.name = name
        self.table_name = table_name or name
        self.embed = embed
        self.chunking = (max(chunk_size, 16), min(chunk_overlap, max(chunk_size, 16) - 1))
        self.splitter = SentenceSplitter(
            chunk_size=self.chunking[0], chunk_overlap=self.chunking[1]
        )  # Part of every row's source_hash: changing the chunking or the embedding model
        # re-indexes the files even though their bytes did not change.
        model_name = getattr(embed, "model_name", type(embed).__name__)
        # how chunks are embedded is part of the fingerprint ("cut" keeps the old indexes valid)
        scheme = "" if vectors == "cut" else f"/{vectors}"
        self.fingerprint = hashlib.sha1(
            f"{chunk_size}/{chunk_overlap}/{model_name}{scheme}".encode()
        ).hexdigest()[:10]
        self._db: Any = None
        self._table: Any = None
        # (table version, every outline entry, every document's title)
        self._outline: tuple[int, list[str], list[str]] | None = None
        self._weights: tuple[int, FusionWeights] | None = None  # (table version, weights)

    # --- storage -------------------------------------------------------------------------------
    @property
    def db(self) -> Any:
        if self._db is None:
            self.index_dir.mkdir(parents=True, exist_ok=True)
            self._db = lancedb.connect(str(self.index_dir))
        return self._db

    def exists(self) -> bool:
        return self._open() is not None

    def _open(self) -> Any:
        if self._table is None:
            try:
                self._table = self.db.open_table(self.table_name)
            except (ValueError, FileNotFoundError, RuntimeError):
                return None
        return self._table

    def table(self) -> Any:
        table = self._open()
        if table is None:
            raise IndexMissingError(
                f"The {self.name} index does not exist in {self.index_dir}.",
                hint="Run `toolrag index` first.",
            )
        return table

    def count(self) -> int:
        table = self._open()
        return 0 if table is None else int(table.count_rows())

    def _manifest(self) -> dict[str, str]:
        table = self._open()
        if table is None:
            return {}
        data = table.to_arrow().select(["source", "source_hash"]).to_pylist()
        return {row["source"]: row["source_hash"] for row in data}

    # --- sync ----------------------------------------------------------------------------------
    def sync(
        self,
        loader: Loader,
        progress: ProgressFn | None = None,
        build_rows: BuildRows | None = None,
    ) -> SyncReport:
        """Bring the table in line with the loader's files: skip unchanged files, replace the
        rows of changed ones, drop the rows of deleted ones. Row ids are stable.

        ``build_rows`` reads, chunks and embeds the changed files (default: here, one file
        after another; :func:`toolrag.content.ray_sync.ray_build_rows` does it on a Ray
        cluster); the rows are written here either way, so both give the same table. One
        process writes a table at a time (:func:`toolrag.locks.writer_lock`): a second run
        waits, then finds the first one's rows and skips the files it indexed."""
        with writer_lock(self.index_dir, self.table_name):
            self._table = None  # another process may have created or changed it meanwhile
            return self._sync(loader, progress, build_rows)

    def _sync(
        self, loader: Loader, progress: ProgressFn | None, build_rows: BuildRows | None
    ) -> SyncReport:
        report = SyncReport(collection=self.name)
        files = loader.files()
        table = self._open()
        if table is not None:
            self._conform(table)
        known = self._manifest()
        current = {loader.source_id(p): p for p in files}
        for source in sorted(set(known) - set(current)):
            if table is not None:
                table.delete(f"source = {_sql_str(source)}")
            report.deleted.append(source)
        todo: list[tuple[str, Path, str]] = []
        done = 0
        for source, path in sorted(current.items()):
            digest = f"{file_sha256(path)}:{loader.version}:{self.fingerprint}"
            if known.get(source) == digest:
                report.unchanged += 1
                done += 1
                if progress:
                    progress(self.name, done, len(current))
            else:
                todo.append((source, path, digest))
        for built in (build_rows or self.build_rows)(todo, loader):
            done += 1
            report.errors += built.notes
            if built.error is not None:
                report.errors.append(built.error)
            else:
                self._write(built.source, built.rows, replace=built.source in known)
                (report.updated if built.source in known else report.added).append(built.source)
                report.chunks_written += len(built.rows)
            if progress:
                progress(self.name, done, len(current))
        if report.changed and self._open() is not None:
            self._reindex_fts()
            self.warm_up()  # the fusion weights of the new version, chosen now
        report.rows_total = self.count()
        return report

    def warm_up(self) -> None:
        """Open the table and, for ``auto`` fusion, choose its weights now: a first search
        would otherwise pay for both inside a tool's deadline."""
        opened = self._open() is not None
        if opened and self.fusion == "auto":
            self.fusion_weights()

    def build_rows(
        self, todo: Sequence[tuple[str, Path, str]], loader: Loader
    ) -> Iterator[FileRows]:
        """Each ``(source, path, digest)`` read by ``loader``, chunked and embedded here."""
        for source, path, digest in todo:
            yield self.file_rows(source, path, digest, loader)

    def file_rows(self, source: str, path: Path, digest: str, loader: Loader) -> FileRows:
        """One file's rows, or the one line that says why it could not be read."""
        problems: list[str] = getattr(loader, "problems", [])
        before = len(problems)
        try:
            records = loader.load(path)
        except IngestError as exc:
            return FileRows(source=source, error=exc.one_line())
        finally:
            notes = problems[before:]
            del problems[before:]  # reported with the file, wherever it was read
        rows = self._rows(source, digest, records, loader.chunked)
        return FileRows(source=source, rows=rows, notes=notes)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for a Ray worker: without the open database, the table or the embedding
        model (the worker builds its own)."""
        state = dict(self.__dict__)
        state.update(_db=None, _table=None, _outline=None, embed=None, splitter=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # the splitter's tokenizer is built again here: unpickled as it is, tiktoken would
        # look for its encoding on the network rather than in LlamaIndex's bundled cache
        self.__dict__.update(state)
        self.splitter = SentenceSplitter(
            chunk_size=self.chunking[0], chunk_overlap=self.chunking[1]
        )

    def _rows(
        self, source: str, digest: str, records: Sequence[Record], chunked: bool
    ) -> list[dict[str, Any]]:
        pieces: list[tuple[Record, int, str]] = []
        for record in records:
            texts = self.splitter.split_text(record.text) if chunked else [record.text]
            pieces.extend((record, i, t) for i, t in enumerate(texts))
        texts = [p[2] for p in pieces]
        if self.vectors == "whole":
            vectors = whole_text_embeddings(self.embed, texts)
        else:
            vectors = self.embed.get_text_embedding_batch(texts)
        rows = []
        for n, ((record, i, text), vector) in enumerate(zip(pieces, vectors, strict=True)):
            row = self._metadata(record)
            row.update(
                id=f"{source}#{n}",
                source=source,
                source_hash=digest,
                chunk=i,
                text=text,
                extra=json.dumps(record.extra, sort_keys=True),
                vector=vector,
            )
            rows.append(row)
        return rows

    def _conform(self, table: Any) -> None:
        """Give a table the metadata columns of today's fields: a declared field added since
        the table was made becomes a column of nulls, one removed is dropped, one whose type
        changed is made again. Every file is then re-read (the loader's version changed with
        its fields) and its rows replaced one file at a time, so a file that cannot be read
        keeps its rows."""
        have = {f.name: f.type for f in table.schema}
        want = {f.name: f for f in self._metadata_fields()}
        fixed = {f.name for f in self._schema(1)} - set(want)
        stale = [n for n in have if n not in fixed and (n not in want or have[n] != want[n].type)]
        if stale:
            table.drop_columns(stale)
        missing = [f for n, f in want.items() if n not in have or n in stale]
        if missing:
            table.add_columns(pa.schema(missing))

    def _write(self, source: str, rows: list[dict[str, Any]], replace: bool) -> Any:
        table = self._open()
        if table is None:
            if not rows:
                return None
            dim = len(rows[0]["vector"])
            self._table = self.db.create_table(self.table_name, schema=self._schema(dim))
            table = self._table
        if replace:
            table.delete(f"source = {_sql_str(source)}")
        if rows:
            table.add(rows)
        return table

    # --- columns (what subclasses with other metadata change) -----------------------------------
    def _metadata_fields(self) -> list[pa.Field]:
        """The metadata columns between the fixed ones (id, source, ..., text, chunk, vector)."""
        return []

    def _schema(self, dim: int) -> pa.Schema:
        fields = [pa.field(name, pa.string()) for name in _BASE_TEXT]
        fields += self._metadata_fields()
        fields += [pa.field(name, pa.string()) for name in ("extra", "text")]
        fields.append(pa.field("chunk", pa.int32()))
        fields.append(pa.field("vector", pa.list_(pa.float32(), dim)))
        return pa.schema(fields)

    @property
    def result_columns(self) -> list[str]:
        """Every column but the vector: converting 384 floats per row to Python costs more
        than the search."""
        return [*_BASE_TEXT, *(f.name for f in self._metadata_fields()), "extra", "text", "chunk"]

    def _metadata(self, record: Record) -> dict[str, Any]:
        """A record's metadata columns."""
        return {"doc_id": record.doc_id, "title": record.title}

    def _hit(self, row: dict[str, Any], score: float, similarity: float | None) -> Hit:
        return Hit.from_row(row, score, similarity)

    def _reindex_fts(self) -> None:
        self.table().create_index("text", config=FTS(), replace=True)

    # --- search --------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 5,
        filters: Filters | None = None,
        mode: SearchMode = "hybrid",
        *,
        fusion: FusionMode | None = None,
    ) -> list[Hit]:
        """Top-k passages for ``query`` within ``filters``; hybrid fuses dense and BM25 by
        reciprocal rank, weighted as :meth:`fusion_weights` chose for this table (``fusion``
        "auto", the index's default) or equally ("rrf")."""
        table = self.table()
        where = filters.where() if filters is not None else None
        pool = max(k * 4, 20)
        dense: list[dict[str, Any]] = []
        sparse: list[dict[str, Any]] = []
        if mode in ("hybrid", "dense"):
            vector = self.embed.get_query_embedding(query)
            dense = self._dense(table, vector, where, pool, [*self.result_columns, "_distance"])
        if mode in ("hybrid", "bm25"):
            sparse = self._fts(table, query, where, pool, self.result_columns)
        if mode == "dense":
            return [self._hit(r, 1 - r["_distance"], 1 - r["_distance"]) for r in dense[:k]]
        if mode == "bm25":
            return [self._hit(r, float(r.get("_score", 0.0)), None) for r in sparse[:k]]
        weights = self.fusion_weights() if (fusion or self.fusion) == "auto" else None
        fused = reciprocal_rank_fusion(
            ([r["id"] for r in ranking] for ranking in (dense, sparse)),
            weights=None if weights is None else (weights.dense, weights.bm25),
        )
        rows: dict[str, dict[str, Any]] = {}
        sims: dict[str, float] = {}
        for row in (*dense, *sparse):
            rows.setdefault(row["id"], row)
        for row in dense:
            sims[row["id"]] = 1 - row["_distance"]
        order = sorted(fused, key=lambda i: (-fused[i], i))[:k]
        return [self._hit(rows[i], fused[i], sims.get(i)) for i in order]

    def fusion_weights(self) -> FusionWeights:
        """The RRF weights of dense and BM25 for this table, chosen from pseudo-queries drawn
        from its own chunks (see :mod:`toolrag.content.fusion`): computed once per table
        version, kept in memory and beside the table (``<table>.fusion.json``)."""
        table = self.table()
        version = int(table.version)
        if self._weights is not None and self._weights[0] == version:
            return self._weights[1]
        saved = self.index_dir / f"{self.table_name}.fusion.json"
        weights = None
        if saved.exists():
            try:
                data = json.loads(saved.read_text())
                same = data.get("version") == version and data.get("rule") == CALIBRATION_RULE
                if same and data.get("fingerprint") == self.fingerprint:
                    weights = FusionWeights.model_validate(data["weights"])
            except (ValueError, KeyError, TypeError):
                weights = None
        if weights is None:
            weights = calibrate(table, self.embed, self._dense, self._fts)
            payload = {
                "version": version,
                "fingerprint": self.fingerprint,
                "rule": CALIBRATION_RULE,
                "weights": weights.model_dump(),
            }
            # a read-only index folder (shared storage) keeps them in memory only
            with contextlib.suppress(OSError):
                saved.write_text(json.dumps(payload, indent=1) + "\n")
        self._weights = (version, weights)
        return weights

    @staticmethod
    def _dense(
        table: Any, vector: Sequence[float], where: str | None, limit: int, columns: list[str]
    ) -> list[dict[str, Any]]:
        q = table.search(list(vector), vector_column_name="vector").distance_type("cosine")
        if where:
            q = q.where(where, prefilter=True)
        return list(q.select(columns).limit(limit).to_list())

    @staticmethod
    def _fts(
        table: Any, query: str, where: str | None, limit: int, columns: list[str]
    ) -> list[dict[str, Any]]:
        terms = re.findall(r"[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*", query)
        if not terms:
            return []
        q = table.search(" ".join(terms), query_type="fts", fts_columns="text")
        if where:
            q = q.where(where, prefilter=True)
        try:
            return list(q.select([*columns, "_score"]).limit(limit).to_list())
        except (ValueError, RuntimeError, OSError) as exc:  # no FTS index yet, parse error
            if "index" in str(exc).lower() or "query" in str(exc).lower():
                return []
            raise ToolragError(f"Full-text search failed: {exc}") from exc

    def rows(self, filters: Filters | None = None, limit: int = 200) -> list[Hit]:
        """Every row matching ``filters`` (no query), ordered by doc id and chunk."""
        table = self.table()
        q = table.search()
        where = filters.where() if filters is not None else None
        if where:
            q = q.where(where)
        data = q.select(self.result_columns).limit(limit).to_list()
        data.sort(key=lambda r: (r["doc_id"], r["chunk"]))
        return [self._hit(r, 1.0, None) for r in data]

    def outline(self, limit: int = OUTLINE_MAX) -> list[str]:
        """What the index holds, in a few words per entry: each document's title, then the
        Markdown headings of its chunks, without repeats, at most ``limit`` entries. Read once
        per version of the table: the toolbox asks for it for its guard and its ToolIndex."""
        table = self._open()
        if table is None:
            return []
        return self._read(table)[1][:limit]

    def titles(self, limit: int = OUTLINE_MAX) -> tuple[list[str], int]:
        """At most ``limit`` of the documents' distinct titles, spread evenly over the index
        (in the order of their ids), and how many there are in all: a few words on what the
        collection holds, for its tool's description (``topics``)."""
        table = self._open()
        if table is None:
            return [], 0
        every = self._read(table)[2]
        if len(every) <= limit:
            return list(every), len(every)
        step = len(every) / limit
        return [every[int(n * step)] for n in range(limit)], len(every)

    def _read(self, table: Any) -> tuple[int, list[str], list[str]]:
        """The outline and the titles of the table's current version, read once per version."""
        version = int(table.version)
        if self._outline is None or self._outline[0] != version:
            self._outline = (version, *self._read_outline(table))
        return self._outline

    @staticmethod
    def _read_outline(table: Any) -> tuple[list[str], list[str]]:
        data = table.to_arrow().select(["doc_id", "chunk", "title", "text"]).to_pylist()
        data.sort(key=lambda r: (r["doc_id"] or "", r["chunk"] or 0))
        out: list[str] = []
        titles: list[str] = []
        seen: set[str] = set()
        seen_titles: set[str] = set()
        for row in data:
            title = " ".join((row["title"] or "").split())
            if len(re.findall(r"[^\W\d_]", title)) >= 3 and title.lower() not in seen_titles:
                seen_titles.add(title.lower())
                titles.append(title)
            for entry in [row["title"], *headings(row["text"] or "")]:
                entry = _NUMBERING.sub("", (entry or "").strip(" #\t"))
                if len(re.findall(r"[^\W\d_]", entry)) >= 3 and entry.lower() not in seen:
                    seen.add(entry.lower())
                    out.append(entry)
        return out, titles

    def distinct(self, column: str) -> list[str]:
        table = self._open()
        if table is None:
            return []
        return sorted({v for v in table.to_arrow().column(column).to_pylist() if v})
