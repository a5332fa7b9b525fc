"""Layers 2 and 3 of the read-only SQL guard: the connection and the limits.

- SQLite opens the file with ``mode=ro`` and, while a guarded query runs, installs an authorizer
  that allows only reads and function calls (no writes, no PRAGMA, no ATTACH) and, once
  :meth:`ReadOnlyDatabase.restrict` names the allowed tables, denies a read of any column of a
  table off that list: the allow-list is enforced a second time, by the database itself. A
  progress handler interrupts the query at its deadline, and the connection's length limit
  (``SQLITE_LIMIT_LENGTH``) stops a string or blob from growing past ``max_value_bytes`` inside
  one step, where no deadline can reach.
- PostgreSQL connections default every transaction to ``READ ONLY`` with a ``statement_timeout``
  and a ``work_mem`` (session settings, no extra round trips), optionally as a ``role`` that can
  read only the listed tables, and the server stops after the row cap (LIMIT).
- Every dialect stops reading after ``max_rows`` rows and says so with ``truncated``.

Any other SQLAlchemy URL gets layers 1 and 3 plus a rolled-back transaction; give such a
database a read-only login.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import column as sa_column
from sqlalchemy import create_engine, func, inspect, or_, select
from sqlalchemy import table as sa_table
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.pool import NullPool, StaticPool

from toolrag.errors import ConfigError
from toolrag.tools.sql.guard import _is_forbidden_function

# sqlite3 authorizer action codes a read-only query needs (SQLITE_READ is judged per table).
_SQLITE_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_RECURSIVE,
}
_SYSTEM_TABLES = ("sqlite_", "_toolrag_")
# Table-valued functions SQLite reports as table reads; their names were checked in layer 1.
_TABLE_FUNCTIONS = frozenset({"json_each", "json_tree"})
# A table-valued function's constructor reads the schema's rowids while it is prepared.
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})
MAX_VALUE_BYTES = 5_000_000  # the largest string or blob one query may build
MAX_LIKE_PATTERN = 1_000  # LIKE and GLOB patterns: SQLite's default is 50,000
MIN_NAME_PART = 4  # the shortest value looked up as whole words inside stored values


class QueryTimeout(Exception):
    """The query ran past its deadline and was stopped."""


class QueryFailed(Exception):
    """The database rejected the query (the driver's message, first line)."""


class QueryTooLarge(QueryFailed):
    """A value the query built grew past the database's length limit."""


@dataclass
class Rows:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


_PLAIN = frozenset({int, float, str, bool, type(None)})


def _jsonable_row(row: Any) -> list[Any]:
    return [v if type(v) in _PLAIN else _jsonable(v) for v in row]


def _jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    return value


class SQLiteAuthorizer:
    """SQLite's authorizer for guarded queries: reads and safe function calls only, and, once
    ``tables`` is set, reads of those tables only.

    SQLite calls it while it prepares a statement, after resolving every name, so a CTE that
    shadows a table's name cannot hide the real table here. A column read is allowed when its
    table is listed or when it happens inside a listed view; a read without a column (``SELECT
    count(*) FROM t``) names the table or CTE it counts, so it is allowed for listed tables and
    for the statement's own CTEs (``ctes``, from layer 1).
    """

    def __init__(self) -> None:
        self.tables: frozenset[str] | None = None
        self.ctes: frozenset[str] = frozenset()

    def __call__(
        self,
        action: int,
        arg1: str | None,
        arg2: str | None,
        database: str | None,
        source: str | None,
    ) -> int:
        if action in _SQLITE_ALLOWED:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            allowed = self._may_read(arg1, arg2, database, source)
            return sqlite3.SQLITE_OK if allowed else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            return sqlite3.SQLITE_DENY if _is_forbidden_function(name) else sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
            # the first use of json_each on a connection registers the table-valued function
            # in the in-memory schema; the file is opened mode=ro and layer 1 refuses writes
            internal = database == "main" and source is None
            return sqlite3.SQLITE_OK if internal else sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_DENY

    def _may_read(
        self, table: str | None, column: str | None, database: str | None, source: str | None
    ) -> bool:
        if self.tables is None:
            return True
        name = (table or "").lower()
        if name in self.tables or (source or "").lower() in self.tables:
            return True
        if name in _TABLE_FUNCTIONS:
            return True
        if name in _SCHEMA_TABLES and column == "ROWID" and source is None:
            return True  # a table-valued function being prepared, never the schema's text
        return not column and database is None and name in self.ctes


def _too_large(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "too big" in text or "too large" in text


class ReadOnlyDatabase:
    """A database reached through a SQLAlchemy URL, queried read-only with limits."""

    def __init__(
        self,
        url: str,
        timeout_s: float = 5.0,
        max_rows: int = 200,
        *,
        role: str | None = None,
        work_mem: str = "16MB",
    ) -> None:
        """``role``: on PostgreSQL, the role every session takes (``SET ROLE``); give it
        ``SELECT`` on the allowed tables only (:func:`reader_role_sql`). ``work_mem``: on
        PostgreSQL, the memory one sort or hash of a query may use before it spills."""
        try:
            self.url: URL = make_url(url)
        except ArgumentError as exc:
            raise ConfigError(
                f"{url!r} is not a SQLAlchemy database URL.",
                hint="Use sqlite:///path/to/file.db or postgresql+psycopg://user@host/db.",
            ) from exc
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.dialect = self.url.get_backend_name()
        self.role = role
        self.work_mem = work_mem
        # SQLite: every read takes turns on one shared connection (reentrant: a schema read may
        # run inside a guarded query's turn)
        self._lock = threading.RLock()
        self._authorizer = SQLiteAuthorizer()
        self.engine = self._make_engine()
        self._sqlite: sqlite3.Connection | None = None
        self._deadline = 0.0

    # --- connections ----------------------------------------------------------------------------
    def _make_engine(self) -> Engine:
        if self.dialect == "sqlite":
            path = Path(self.url.database or "")
            if not self.url.database or not path.is_file():
                raise ConfigError(
                    f"The SQLite database {path} does not exist.",
                    hint="Run `toolrag index` to build the sample database, or fix database_url.",
                )
            uri = f"file:{path.resolve()}?mode=ro"
            self._sqlite_uri = uri
            timeout = self.timeout_s

            def connect() -> sqlite3.Connection:
                conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=timeout)
                _limit(conn)
                return conn

            # one read-only connection, serialised by a lock: SQLite reads are fast and
            # opening a connection costs more than most queries
            return create_engine("sqlite://", creator=connect, poolclass=StaticPool)
        if self.dialect == "postgresql":
            # every statement runs in its own READ ONLY transaction with a statement timeout,
            # set once per connection: no extra round trips per query
            options = (
                "-c default_transaction_read_only=on "
                f"-c statement_timeout={int(self.timeout_s * 1000)} "
                f"-c work_mem={_pg_setting(self.work_mem)}"
            )
            if self.role:
                options += f" -c role={_pg_setting(self.role)}"
            return create_engine(
                self.url,
                pool_pre_ping=True,
                pool_size=2,
                isolation_level="AUTOCOMMIT",
                connect_args={"options": options},
            )
        return create_engine(self.url, poolclass=NullPool)

    def restrict(self, tables: Collection[str] | None) -> None:
        """Let guarded SQLite queries read only ``tables`` (None: any table). The SQL tool spec
        calls it with its allow-list; layer 1 refuses the same tables with a clearer message."""
        self._authorizer.tables = None if tables is None else frozenset(t.lower() for t in tables)

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)

    def serialized(self) -> AbstractContextManager[Any]:
        """The shared SQLite connection's lock (no lock for a server database's pool): every
        use of it, schema reads included, takes its turn. Two threads in the one connection
        at once deadlocked the process: one inside SQLite waiting for the GIL to run the
        authorizer, the other holding the GIL waiting for SQLite."""
        return self._lock if self.dialect == "sqlite" else _nullcontext()

    def table_names(self) -> list[str]:
        """The tables and views a query may name (the engine's and toolrag's own left out)."""
        with self.serialized():
            insp = inspect(self.engine)
            names = [*insp.get_table_names(), *insp.get_view_names()]
        return sorted({n for n in names if not n.startswith(_SYSTEM_TABLES)})

    def describe(self, table: str) -> dict[str, Any]:
        """Columns, types, primary and foreign keys of ``table`` (an existing table name)."""
        with self.serialized():
            insp = inspect(self.engine)
            pk = set(insp.get_pk_constraint(table).get("constrained_columns") or [])
            foreign = insp.get_foreign_keys(table)
            found = insp.get_columns(table)
        fks = [
            {
                "columns": fk["constrained_columns"],
                "references": f"{fk['referred_table']}({', '.join(fk['referred_columns'])})",
            }
            for fk in foreign
        ]
        columns = [
            {
                "name": c["name"],
                "type": str(c["type"]),
                "nullable": bool(c.get("nullable", True)),
                "primary_key": c["name"] in pk,
            }
            for c in found
        ]
        return {"table": table, "columns": columns, "foreign_keys": fks}

    @contextmanager
    def _guarded(self, timeout_s: float | None = None) -> Iterator[Connection]:
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        with self.serialized(), self.engine.connect() as conn:
            if self.dialect == "sqlite":
                raw: Any = conn.connection.dbapi_connection
                self._authorizer.ctes = frozenset()
                raw.set_authorizer(self._authorizer)
                raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 2000)
                try:
                    yield conn
                finally:
                    raw.set_progress_handler(None, 0)
                    raw.set_authorizer(None)
                    conn.rollback()
            elif self.dialect == "postgresql":
                yield conn  # read-only and time-limited by the connection's session defaults
            else:
                try:
                    yield conn
                finally:
                    conn.rollback()

    def query(self, sql: str, max_rows: int | None = None, ctes: Collection[str] = ()) -> Rows:
        """Run one checked SELECT read-only; at most ``max_rows`` rows come back.

        ``ctes``: the names of the statement's own CTEs (layer 1's ``CheckedSQL.ctes``), which
        SQLite's authorizer sees as tables. Raises :class:`QueryTimeout` past the deadline,
        :class:`QueryTooLarge` when a value grows past the length limit and
        :class:`QueryFailed` when the database rejects the query.
        """
        cap = min(max_rows or self.max_rows, self.max_rows)
        if self.dialect == "sqlite":
            columns, fetched = self._query_sqlite(sql, cap, ctes)
        else:
            columns, fetched = self._query_engine(sql, cap)
        rows = [_jsonable_row(row) for row in fetched[:cap]]
        return Rows(columns=columns, rows=rows, truncated=len(fetched) > cap)

    def _interrupt(self) -> int:
        return int(time.monotonic() > self._deadline)

    def _query_sqlite(
        self, sql: str, cap: int, ctes: Collection[str] = ()
    ) -> tuple[list[str], list[Any]]:
        """The driver directly (no pool round trip): one read-only connection whose
        authorizer and progress handler stay installed, serialised by a lock."""
        with self._lock:
            if self._sqlite is None:
                conn = sqlite3.connect(  # a writer's lock is waited for up to the timeout
                    self._sqlite_uri, uri=True, check_same_thread=False, timeout=self.timeout_s
                )
                _limit(conn)
                conn.set_authorizer(self._authorizer)
                conn.set_progress_handler(self._interrupt, 1000)
                self._sqlite = conn
            self._authorizer.ctes = frozenset(c.lower() for c in ctes)
            self._deadline = time.monotonic() + self.timeout_s
            try:
                cursor = self._sqlite.execute(sql)
                columns = [d[0] for d in cursor.description or []]
                fetched = cursor.fetchmany(cap + 1)
                cursor.close()
            except sqlite3.OperationalError as exc:
                if "interrupted" in str(exc):
                    raise QueryTimeout(f"The query ran past {self.timeout_s:g} s.") from exc
                raise QueryFailed(_first_line(exc)) from exc
            except sqlite3.Error as exc:
                if _too_large(exc):
                    raise QueryTooLarge(_first_line(exc)) from exc
                raise QueryFailed(_first_line(exc)) from exc
            finally:
                if self._sqlite.in_transaction:
                    self._sqlite.rollback()
        return columns, fetched

    def _query_engine(self, sql: str, cap: int) -> tuple[list[str], list[Any]]:
        started = time.monotonic()
        stream = True
        if self.dialect == "postgresql":  # the server stops after cap + 1 rows
            sql = f"SELECT * FROM (\n{sql}\n) AS _toolrag_q LIMIT {cap + 1}"
            stream = False  # a server-side cursor needs a transaction block; LIMIT suffices
        try:
            with self._guarded() as conn:
                result = conn.execution_options(stream_results=stream).exec_driver_sql(sql)
                columns = list(result.keys())
                fetched = list(result.fetchmany(cap + 1))
                result.close()
        except (OperationalError, DBAPIError) as exc:
            if _is_timeout(exc, time.monotonic() - started, self.timeout_s):
                raise QueryTimeout(f"The query ran past {self.timeout_s:g} s.") from exc
            if _too_large(exc.orig or exc):
                raise QueryTooLarge(_first_line(exc.orig or exc)) from exc
            raise QueryFailed(_first_line(exc.orig or exc)) from exc
        return columns, fetched

    def lookup(
        self,
        table_name: str,
        key: str,
        label: str,
        ids: Sequence[Any],
        timeout_s: float | None = None,
    ) -> dict[Any, Any]:
        """``{id: label}`` for the rows of ``table_name`` whose ``key`` is one of ``ids``.

        One parameterised read (``SELECT key, label FROM table WHERE key IN (...)``, built by
        SQLAlchemy with bound values, the names quoted by the dialect) on the guarded
        connection: read-only, at most ``max_rows`` rows, stopped at ``timeout_s`` on SQLite
        (default: the database's timeout; PostgreSQL's ``statement_timeout`` bounds it there).
        ``table_name``, ``key`` and ``label`` are reflected names, never the model's text.
        Raises :class:`QueryTimeout` or :class:`QueryFailed` like :meth:`query`.
        """
        if not ids:
            return {}
        source = sa_table(table_name, sa_column(key), sa_column(label))
        stmt = (
            select(source.c[key], source.c[label])
            .where(source.c[key].in_(list(ids)[: self.max_rows]))
            .limit(self.max_rows)
        )
        started = time.monotonic()
        limit = self.timeout_s if timeout_s is None else timeout_s
        try:
            with self._guarded(limit) as conn:
                fetched = conn.execute(stmt).fetchmany(self.max_rows)
        except (OperationalError, DBAPIError) as exc:
            if _is_timeout(exc, time.monotonic() - started, limit):
                raise QueryTimeout(f"The lookup ran past {limit:g} s.") from exc
            raise QueryFailed(_first_line(exc.orig or exc)) from exc
        return {_jsonable(k): _jsonable(v) for k, v in fetched if k is not None}

    def find_value(
        self, table_name: str, column_name: str, value: str, timeout_s: float = 1.0
    ) -> str | None:
        """The value of ``column_name`` in ``table_name`` that ``value`` names, as stored, or
        None: equal ignoring case, else the one value that holds ``value`` as whole words
        ("Summit Mechanical" for "Summit Mechanical LLC"; two or more such values name
        nothing). Bound, parameterised ``LIMIT`` reads on the guarded connection; the names are
        reflected ones, never the model's text; a timeout or an error is None (the lookup only
        adds a hint)."""
        source = sa_table(table_name, sa_column(column_name))
        col = source.c[column_name]
        low = value.lower()
        exact = select(col).where(func.lower(col) == low).limit(1)
        escaped = low.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        patterns = (f"{escaped} %", f"% {escaped} %", f"% {escaped}")
        inside = (
            select(col)
            .where(or_(*(func.lower(col).like(p, escape="\\") for p in patterns)))
            .distinct()
            .limit(2)
        )
        try:
            with self._guarded(timeout_s) as conn:
                row = conn.execute(exact).first()
                if row is not None:
                    return None if row[0] is None else str(row[0])
                if len(low.strip()) < MIN_NAME_PART or not any(c.isalpha() for c in low):
                    return None
                found = [r[0] for r in conn.execute(inside).fetchall() if r[0] is not None]
        except (OperationalError, DBAPIError):
            return None
        return str(found[0]) if len(found) == 1 else None

    def raw_query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Unguarded read for trusted, internal SQL (sample rows for describe_table)."""
        with self._guarded() as conn:
            return [tuple(r) for r in conn.exec_driver_sql(sql, tuple(params)).fetchall()]

    def dispose(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
            self._sqlite = None
        self.engine.dispose()


def _limit(conn: sqlite3.Connection) -> None:
    """Bound what one statement on ``conn`` may build: strings and blobs, LIKE patterns."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN)


def _pg_setting(value: str) -> str:
    """A PostgreSQL setting value safe to put in the ``options`` string (no spaces or quotes)."""
    if not re.fullmatch(r"[A-Za-z0-9_]{1,63}", value):
        raise ConfigError(
            f"{value!r} is not a valid PostgreSQL role or memory setting.",
            hint="Use letters, digits and underscores, e.g. toolrag_reader or 16MB.",
        )
    return value


def reader_role_sql(
    role: str, tables: Sequence[str], login: str | None = None, schema: str = "public"
) -> list[str]:
    """The statements an administrator runs once so that ``role`` can read ``tables`` and
    nothing else, and ``login`` (the user of the database URL) may take it; then set
    ``role`` in the SQL spec so that every session does."""
    name = _pg_setting(role)
    quoted = ", ".join('"{}"."{}"'.format(schema, t.replace('"', '""')) for t in tables)
    statements = [
        f"CREATE ROLE {name} NOLOGIN",
        f'GRANT USAGE ON SCHEMA "{schema}" TO {name}',
        f"GRANT SELECT ON {quoted} TO {name}",
    ]
    if login:
        statements.append(f"GRANT {name} TO {_pg_setting(login)}")
    return statements


@contextmanager
def _nullcontext() -> Iterator[None]:
    yield


def _is_timeout(exc: DBAPIError, elapsed: float, limit: float) -> bool:
    text = str(exc.orig).lower()
    if "interrupted" in text or "statement timeout" in text or "canceling statement" in text:
        return True
    return elapsed >= limit and "cancel" in text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
