"""``SQLToolSpec``: read-only tools over any SQLAlchemy database, built from its own schema.

Tools: ``list_tables``, ``describe_table`` and ``run_sql``, plus an optional ``query_<name>``
tool that goes from a question to SQL to an answer (LlamaIndex's ``NLSQLTableQueryEngine`` over
a ``SQLDatabase`` whose ``run_sql`` goes through the same guard). Every statement passes the
three guard layers (:mod:`toolrag.tools.sql.guard`, :mod:`toolrag.tools.sql.db`), and only the
tables of the allow-list are visible.

The allow-list and limits come from a YAML file (``toolspecs/sql.yaml``)::

    name: orders
    description: The shop's orders database ...
    allow_tables: [customers, orders, ...]
    max_rows: 200
    timeout_s: 5
"""

from __future__ import annotations

import difflib
import functools
import logging
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.utilities.sql_wrapper import SQLDatabase
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from toolrag.errors import ConfigError
from toolrag.text import bounded
from toolrag.tools.base import GuardedToolSpec, call_validated
from toolrag.tools.result import ErrorCode, Source, ToolResult
from toolrag.tools.sql.columns import Rename, renamed_columns
from toolrag.tools.sql.db import (
    QueryFailed,
    QueryTimeout,
    QueryTooLarge,
    ReadOnlyDatabase,
    Rows,
)
from toolrag.tools.sql.guard import CheckedSQL, SelectGuard, SQLRejected
from toolrag.tools.sql.labels import LabelMap, column_sources, plan_labels, reflect_labels
from toolrag.tools.sql.literals import ValueLookup, compared_literals, look_up_values, respell

DEFAULT_LIMIT = 50
log = logging.getLogger(__name__)


class SQLSpecConfig(BaseModel):
    """One SQL source: what it holds, which tables the tools may read, and the limits."""

    name: str = Field("database", pattern=r"^[a-z][a-z0-9_]{0,40}$")
    description: str = Field("", description="What the database holds, for tool descriptions.")
    url: str | None = Field(None, description="SQLAlchemy URL; default: the toolbox's database.")
    allow_tables: list[str] | None = Field(
        None, description="Tables the tools may read (least privilege); None: every table."
    )
    expose: list[str] = Field(
        default_factory=lambda: ["list_tables", "describe_table", "run_sql"],
        description="The spec's tools the toolbox gives the agent (all three by default).",
    )
    max_rows: int = Field(200, ge=1, le=10_000)
    timeout_s: float = Field(5.0, gt=0, le=300)
    role: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$",
        description="PostgreSQL: the role every session takes (SET ROLE), granted SELECT on "
        "the allowed tables only, so the database enforces the allow-list too.",
    )
    work_mem: str = Field(
        "16MB",
        pattern=r"^[0-9]{1,6}(kB|MB)?$",
        description="PostgreSQL: the memory one sort or hash may use before it spills.",
    )
    verdict_cache: int = Field(
        1024,
        ge=0,
        le=100_000,
        description="How many checked statements the guard remembers by their exact text "
        "(0: parse every call).",
    )
    label_ids: bool = Field(
        True,
        description="Add a <column>_name column next to a result column that holds the key "
        "of an allowed table with a name/title/label column (one lookup per such column).",
    )

    @classmethod
    def load(cls, path: Path) -> SQLSpecConfig:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
            return cls.model_validate(raw)
        except (OSError, yaml.YAMLError, ValidationError) as exc:
            raise ConfigError(
                f"The SQL tool spec {path} is invalid: {str(exc).splitlines()[0]}",
                hint="Fix the YAML (name, description, allow_tables, max_rows, timeout_s).",
            ) from exc


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return str(orig).strip().splitlines()[0][:300] if str(orig).strip() else type(orig).__name__


class SQLToolSpec(GuardedToolSpec):
    """Read-only SQL tools over one database."""

    spec_functions = ["list_tables", "describe_table", "run_sql"]  # noqa: RUF012
    self_timed = True  # the progress handler / statement_timeout stops a query in time

    def __init__(self, db: ReadOnlyDatabase, config: SQLSpecConfig | None = None) -> None:
        self.db = db
        self.config = config or SQLSpecConfig()
        self._schema_text: str | None = None
        existing = db.table_names()
        self.known_tables = existing
        if self.config.allow_tables is None:
            self.tables = existing
        else:
            missing = sorted(set(self.config.allow_tables) - set(existing))
            if missing:
                raise ConfigError(
                    f"allow_tables names tables that {db.display_url} does not have: "
                    f"{', '.join(missing)}.",
                    hint=f"Its tables are: {', '.join(existing)}.",
                )
            self.tables = [t for t in existing if t in set(self.config.allow_tables)]
        db.restrict(self.tables)  # layer 2 enforces the allow-list too
        self.guard = SelectGuard(
            self._sqlglot_dialect(), self.tables, self.known_tables, self.config.verdict_cache
        )
        self._label_map: LabelMap | None = None
        size = self.config.verdict_cache
        self._sources = functools.lru_cache(maxsize=size)(self._trace) if size else self._trace

    @classmethod
    def from_url(cls, url: str, config: SQLSpecConfig | None = None) -> SQLToolSpec:
        config = config or SQLSpecConfig()
        db = ReadOnlyDatabase(
            url,
            timeout_s=config.timeout_s,
            max_rows=config.max_rows,
            role=config.role,
            work_mem=config.work_mem,
        )
        return cls(db, config)

    def describe_tool(self, name: str, description: str) -> str:
        what = self.config.description.strip() or f"The {self.config.name} database."
        if name == "run_sql":  # the schema in the prompt, as text-to-SQL needs
            return f"{description} Database {self.config.name!r}: {what} Schema: " + (
                self.schema_summary()
            )
        return f"{description} Database {self.config.name!r}: {what} Tables: " + ", ".join(
            self.tables
        )

    def schema_summary(self, max_values: int = 6) -> str:
        """``table(col, col, status in 'a'|'b')`` per table: columns, and the exact values of
        low-cardinality text columns (they are case-sensitive in SQL filters)."""
        if self._schema_text is None:
            parts = []
            try:
                for table in self.tables:
                    cols = []
                    for c in self.db.describe(table)["columns"]:
                        values = self._few_values(table, c["name"], c["type"], max_values)
                        cols.append(
                            f"{c['name']} in " + "|".join(f"'{v}'" for v in values)
                            if values
                            else c["name"]
                        )
                    parts.append(f"{table}({', '.join(cols)})")
            except SQLAlchemyError as exc:  # locked or unreachable now: not cached
                return f"(unavailable right now: {_first_line(exc)}) Tables: " + ", ".join(
                    self.tables
                )
            self._schema_text = "; ".join(parts)
        return self._schema_text

    def _few_values(self, table: str, column: str, type_: str, limit: int) -> list[str]:
        if not any(t in type_.upper() for t in ("TEXT", "CHAR", "STRING", "ENUM")):
            return []
        q = self.db.engine.dialect.identifier_preparer.quote
        rows = self.db.raw_query(
            f"SELECT DISTINCT {q(column)} FROM {q(table)} WHERE {q(column)} IS NOT NULL "
            f"LIMIT {limit + 1}"
        )
        values = [str(r[0]) for r in rows]
        total = self.db.raw_query(f"SELECT COUNT(*) FROM {q(table)}")[0][0]
        if (
            len(values) > limit
            or total < 3 * len(values)  # a category repeats: each value on 3+ rows on average
            or any(len(v) > 30 or _DATE_RE.match(v) for v in values)
        ):
            return []
        return sorted(values)

    # --- tools ----------------------------------------------------------------------------------
    def list_tables(self) -> ToolResult:
        """List the tables of the SQL database, with their columns.

        Use it only when run_sql failed on a table name. Returns each table with its column
        names. It does not return data and does not answer questions: run_sql does.
        """
        data = []
        for table in self.tables:
            info = self.db.describe(table)
            data.append({"table": table, "columns": [c["name"] for c in info["columns"]]})
        return ToolResult.ok(data)

    def describe_table(self, table: str) -> ToolResult:
        """Describe one table of the SQL database: its columns with types, its primary and
        foreign keys, and three sample rows.

        Use it only when run_sql failed on a column name or a value format. Its three sample
        rows are not the data: it does not count, sum or answer questions; run_sql does.

        Args:
            table: The table name, as list_tables returns it.
        """
        name = self._resolve_table(table)
        if isinstance(name, ToolResult):
            return name
        info = self.db.describe(name)
        quoted = self.db.engine.dialect.identifier_preparer.quote(name)
        sample = self.db.raw_query(f"SELECT * FROM {quoted} LIMIT 3")
        columns = [c["name"] for c in info["columns"]]
        info["sample_rows"] = [
            dict(zip(columns, [_plain(v) for v in row], strict=False)) for row in sample
        ]
        return ToolResult.ok(info)

    def run_sql(self, sql: str, limit: int = DEFAULT_LIMIT) -> ToolResult:
        """Run one read-only SQL SELECT query on the SQL database and return the rows.

        Use it for exact figures held in tables: totals, counts, amounts, dates and lists.
        Write one SELECT (WITH, JOIN, GROUP BY and UNION are fine) over the tables listed below.
        Returns the column names and rows, with truncated=true when more rows existed than the
        limit. It does not write: INSERT, UPDATE, DELETE, DDL and PRAGMA are refused.

        Args:
            sql: One SELECT statement in the database's SQL dialect.
            limit: Most rows to return (1-200); aggregate in SQL instead of reading many rows.
        """
        return self.execute(sql, limit)

    # --- shared by run_sql and the query tool ---------------------------------------------------
    def execute(
        self,
        sql: str,
        limit: int = DEFAULT_LIMIT,
        respell_values: bool = True,
        rename: bool = True,
    ) -> ToolResult:
        """The guarded path: parse check, read-only run with timeout, row cap, errors.

        A query that finds nothing because it compared a column with a value stored there
        with other capitals or as a longer name ("Summit Mechanical" for "Summit Mechanical
        LLC", the one value holding those words) runs once more with the stored values
        (``respell_values``), through the same checks; its result says what ran instead.
        So does a query the database rejected for a column its table lacks, when each such
        column has one column it plainly means (``rename``, :mod:`.columns`)."""
        if limit < 1:
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                f"limit must be at least 1; got {limit}.",
                suggestion="Pass a limit between 1 and 200.",
            )
        try:
            checked = self.guard.check(sql)
        except SQLRejected as exc:
            return ToolResult.fail(exc.code, exc.message, suggestion=exc.suggestion)
        started = time.monotonic()
        try:
            rows = self.db.query(
                checked.sql, max_rows=min(limit, self.config.max_rows), ctes=checked.ctes
            )
        except QueryTimeout as exc:
            return ToolResult.fail(
                ErrorCode.TIMEOUT,
                str(exc),
                suggestion="Filter with WHERE, aggregate, and give recursive CTEs a stop "
                "condition.",
            )
        except QueryTooLarge as exc:
            return ToolResult.fail(
                ErrorCode.TOO_LARGE,
                f"The query built a value over the database's size limit: {exc}",
                suggestion="Select the values themselves: do not build long strings or blobs.",
            )
        except QueryFailed as exc:
            meant = self._meant_columns(checked.sql, str(exc)) if rename else None
            if meant is not None and all(r.sure for r in meant[1]):
                again = self._renamed(*meant, limit, respell_values)
                if again is not None:
                    return again
            return ToolResult.fail(
                ErrorCode.QUERY_ERROR,
                f"The database rejected the query: {exc}",
                suggestion=self._suggest(str(exc), checked.tables, meant[1] if meant else []),
            )
        except SQLAlchemyError as exc:
            return ToolResult.fail(
                ErrorCode.QUERY_ERROR,
                f"The query failed: {_first_line(exc)}",
                suggestion="Check the SQL against describe_table.",
            )
        suggestion = None
        if rows.truncated:
            suggestion = "More rows exist: aggregate or filter, or raise limit."
        elif not rows.rows or all(v is None for r in rows.rows for v in r):
            lookup = self._look_up_values(checked.sql, checked.tables)
            again = self._respelled(checked.sql, lookup, limit) if respell_values else None
            if again is not None:
                return again
            hints = lookup.hints
            suggestion = (
                "Nothing matched. "
                + (" ".join(hints) + " Filter on that column and query again." if hints else
                   "Filter values are exact and case-sensitive: check them in the schema or "
                   "with describe_table, then query again.")
            )  # fmt: skip
        elif len(rows.rows) == 1 and all(v in (None, 0) for v in rows.rows[0]):
            # a count or sum of 0 may be a filter value looked for in the wrong column
            lookup = self._look_up_values(checked.sql, checked.tables)
            again = self._respelled(checked.sql, lookup, limit) if respell_values else None
            if again is not None:
                return again
            hints = lookup.hints
            if hints:
                suggestion = (
                    "No row matched. " + " ".join(hints) + " Filter on that column and query again."
                )
        data: dict[str, Any] = {
            "columns": rows.columns,
            "rows": rows.rows,
            "row_count": len(rows.rows),
        }
        added = self._add_labels(checked, rows, started)
        if added:
            data["labels_added"] = added
        result = ToolResult.ok(
            data,
            sources=[
                Source(file=self.db.display_url, locator=", ".join(checked.tables) or "query")
            ],
            suggestion=suggestion,
        )
        result.truncated = rows.truncated
        return result

    # --- names next to ids ----------------------------------------------------------------------
    def labels(self) -> LabelMap | None:
        """The links from key columns to label columns among the allowed tables (reflected
        once; None while the schema cannot be read)."""
        if self._label_map is None:
            try:
                with self.db.serialized():  # the calls of a question may run at once
                    self._label_map = reflect_labels(self.db.engine, self.tables)
            except SQLAlchemyError as exc:  # locked or unreachable now: not cached
                log.debug("no labels for %s: %s", self.db.display_url, _first_line(exc))
                return None
        return self._label_map

    def _trace(self, sql: str) -> Any:
        labels = self.labels()
        dialect = self._sqlglot_dialect()
        return column_sources(sql, dialect, labels.sqlglot_schema(dialect) if labels else None)

    def _add_labels(self, checked: CheckedSQL, rows: Rows, started: float) -> list[str]:
        """Append a ``<column>_name`` column for each result column holding a linked key
        (:mod:`toolrag.tools.sql.labels`): one parameterised lookup per column, over allowed
        tables, within what is left of the timeout. The existing values are never changed;
        on any failure the rows stay as they were. Returns the added column names."""
        if not self.config.label_ids or not rows.rows:
            return []
        try:
            labels = self.labels()
            if labels is None or not labels.linked_tables.intersection(checked.tables):
                return []
            plan = plan_labels(rows.columns, self._sources(checked.sql), checked.tables, labels)
            added: list[tuple[str, list[Any]]] = []
            for item in plan:
                ids = list(
                    dict.fromkeys(
                        v
                        for r in rows.rows
                        if isinstance(v := r[item.index], str | int | float)
                        and not isinstance(v, bool)
                    )
                )[: self.config.max_rows]
                if not ids:
                    continue
                if item.target.table not in self.tables:  # the allow-list, once more
                    continue
                left = self.config.timeout_s - (time.monotonic() - started)
                if left <= 0:
                    log.debug("no time left for labels: %s", checked.sql[:200])
                    return []
                target = item.target
                names = self.db.lookup(target.table, target.key, target.label, ids, left)
                if names:
                    added.append((item.column, [names.get(r[item.index]) for r in rows.rows]))
        except Exception as exc:  # a label is a courtesy: never fail the call for it
            log.debug("labels skipped (%s): %s", type(exc).__name__, exc)
            return []
        for column, values in added:
            rows.columns.append(column)
            for row, value in zip(rows.rows, values, strict=True):
                row.append(value)
        return [column for column, _ in added]

    def _sqlglot_dialect(self) -> str:
        return {"postgresql": "postgres", "mssql": "tsql"}.get(self.db.dialect, self.db.dialect)

    def _resolve_table(self, table: str) -> str | ToolResult:
        wanted = table.strip().strip('"`[]').lower()
        for name in self.tables:
            if name.lower() == wanted:
                return name
        exists = wanted in {t.lower() for t in self.known_tables}
        return ToolResult.fail(
            ErrorCode.FORBIDDEN if exists else ErrorCode.NOT_FOUND,
            f"The table {table!r} is "
            + ("not allowed for this tool." if exists else "not in this database."),
            suggestion=f"Use one of these tables: {', '.join(self.tables)}.",
        )

    def _meant_columns(self, sql: str, error: str) -> tuple[str, list[Rename]] | None:
        """``sql`` with each column its tables lack renamed to the column it most likely
        means, and the renames (:func:`renamed_columns`), when the database's ``error`` is
        about a column and each has its match; None otherwise."""
        if "column" not in error.lower():
            return None
        try:
            schema = {t: [c["name"] for c in self.db.describe(t)["columns"]] for t in self.tables}
        except SQLAlchemyError:
            return None
        return renamed_columns(sql, schema, self._sqlglot_dialect())

    def _renamed(
        self, fixed: str, renames: list[Rename], limit: int, respell_values: bool
    ) -> ToolResult | None:
        """The result of ``fixed``, the query with its unknown columns renamed to the
        columns they surely mean, with a note saying so; None when it fails too (the first
        error and its hint stand)."""
        result = self.execute(fixed, limit, respell_values=respell_values, rename=False)
        if not result.success:
            return None
        swaps = "; ".join(
            f"{r.written} is not a column: ran with {r.table}.{r.column}" for r in renames
        )
        return result.with_note(
            f"The query named columns its tables lack. {swaps}. Check that this is the column "
            f"the question means. Ran: {bounded(fixed, 600)}"
        )

    def _respelled(self, sql: str, lookup: ValueLookup, limit: int) -> ToolResult | None:
        """The result of ``sql`` run with the stored spellings ``lookup`` found, when it finds
        rows; None otherwise (the empty result keeps its hints)."""
        if not lookup.respelled:
            return None
        fixed = respell(sql, lookup.respelled, self._sqlglot_dialect())
        if fixed is None:
            return None
        result = self.execute(fixed, limit, respell_values=False)
        rows = result.data.get("rows") if result.success and isinstance(result.data, dict) else []
        if not rows or all(v in (None, 0) for row in rows for v in row):
            return None  # nothing, or a count or sum of 0, with the stored values too
        swaps = ", ".join(f"'{s}' for '{v}'" for (_, v), s in lookup.respelled.items())
        ran = bounded(fixed, 600)
        return result.with_note(
            f"No row matched as written; ran with {swaps} (the stored values): {ran}"
        )

    def _look_up_values(self, sql: str, tables: list[str]) -> ValueLookup:
        """Where the text values an empty query compared are (:mod:`.literals`), among the
        text columns of the tables it reads, then of the other allowed tables."""
        pairs = compared_literals(sql, self._sqlglot_dialect())
        if not pairs:
            return ValueLookup()
        text: dict[str, list[str]] = {}
        try:
            for table in [*(t for t in tables if t in self.tables), *self.tables]:
                if table not in text:
                    text[table] = [
                        c["name"]
                        for c in self.db.describe(table)["columns"]
                        if any(k in str(c["type"]).upper() for k in ("TEXT", "CHAR", "STRING"))
                    ]
        except SQLAlchemyError:
            return ValueLookup()
        return look_up_values(pairs, text, self.db.find_value)

    def _suggest(self, error: str, tables: list[str], meant: Sequence[Rename] = ()) -> str:
        low = error.lower()
        if "locked" in low or "busy" in low:
            return "The database is busy: another program is writing to it. Try again shortly."
        if "column" in low:
            parts, every = [], []
            for t in tables or self.tables:
                if t in self.tables:
                    cols = [c["name"] for c in self.db.describe(t)["columns"]]
                    every += cols
                    parts.append(f"{t}({', '.join(cols)})")
            if meant:  # the columns the query's unknown ones most likely mean
                hint = (
                    "Did you mean "
                    + ", ".join(f"{r.table}.{r.column} for {r.written}" for r in meant)
                    + "? "
                )
            else:
                bad = re.search(r"column:?\s+\"?([\w.]+)", error)
                close = (
                    difflib.get_close_matches(bad.group(1).split(".")[-1], every, n=2, cutoff=0.8)
                    if bad
                    else []
                )
                hint = f"Did you mean {' or '.join(close)}? " if close else ""
            return f"{hint}Call run_sql again using only these columns: " + "; ".join(parts) + "."
        if "table" in low or "relation" in low:
            return f"Use one of these tables: {', '.join(self.tables)}."
        if "not authorized" in low or "read-only" in low or "readonly" in low:
            return "This database is read-only: use a plain SELECT."
        return "Fix the SQL (describe_table shows columns and sample values) and try again."

    # --- text-to-SQL ----------------------------------------------------------------------------
    def query_tool(self, llm: LLM, embed_model: BaseEmbedding | None = None) -> FunctionTool:
        """``query_<name>``: question -> SQL (schema in the prompt) -> guarded run -> answer."""
        from llama_index.core.query_engine import NLSQLTableQueryEngine

        engine = NLSQLTableQueryEngine(
            sql_database=GuardedSQLDatabase(self),
            tables=self.tables,
            llm=llm,
            embed_model=embed_model,
            synthesize_response=True,
        )
        name = f"query_{self.config.name}"

        def query(question: str) -> ToolResult:
            response = engine.query(question)
            meta = response.metadata or {}
            data = {
                "answer": str(response),
                "sql": meta.get("sql_query", ""),
                "columns": meta.get("col_keys", []),
                "rows": [list(map(_plain, r)) for r in meta.get("result", [])][:DEFAULT_LIMIT],
            }
            error = next(
                (n.node.get_content() for n in response.source_nodes if _is_error(n)), None
            )
            if error:
                return ToolResult.fail(
                    ErrorCode.QUERY_ERROR,
                    f"{error} (SQL: {data['sql']})",
                    suggestion="Rephrase the question, or use describe_table and run_sql.",
                )
            return ToolResult.ok(data, sources=[Source(file=self.db.display_url, locator=name)])

        what = self.config.description.strip() or f"the {self.config.name} database"
        description = (
            f"Answer a question from {what} by writing and running a read-only SQL query. "
            "Use it for totals, counts, amounts and lists held in tables. Returns the answer, "
            f"the SQL it ran and the rows. It does not write. Tables: {', '.join(self.tables)}"
        )

        class QueryArgs(BaseModel):
            question: str = Field(description="The question in plain words, with names and dates.")

        def run(**kwargs: Any) -> ToolResult:
            return call_validated(name, query, QueryArgs, kwargs)

        return FunctionTool(
            fn=run, metadata=ToolMetadata(name=name, description=description, fn_schema=QueryArgs)
        )


class GuardedSQLDatabase(SQLDatabase):
    """LlamaIndex's ``SQLDatabase`` whose ``run_sql`` goes through the SQL tool spec's guard."""

    def __init__(self, spec: SQLToolSpec) -> None:
        with spec.db.serialized():  # it reflects the schema on the shared connection
            super().__init__(
                spec.db.engine, include_tables=spec.tables, sample_rows_in_table_info=3
            )
        self._spec = spec

    def run_sql(self, command: str) -> tuple[str, dict[str, Any]]:
        result = self._spec.execute(command)
        if not result.success:
            raise ValueError(f"{result.error_message} {result.suggestion or ''}".strip())
        data = result.data
        rows = [tuple(r) for r in data["rows"]]
        note = " (truncated)" if result.truncated else ""
        return str(rows) + note, {"result": rows, "col_keys": data["columns"]}


def _is_error(node: Any) -> bool:
    return str(node.node.get_content()).startswith("Error:")


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


_NAME_RE = re.compile(r"[^a-z0-9_]+")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def spec_name(text: str) -> str:
    """A valid spec name from free text (``Chinook DB`` -> ``chinook_db``)."""
    return _NAME_RE.sub("_", text.lower()).strip("_")[:40] or "database"
