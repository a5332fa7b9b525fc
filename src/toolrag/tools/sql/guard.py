"""Layer 1 of the read-only SQL guard: a sqlglot parse before anything reaches the database.

A statement passes only when it is exactly one ``SELECT`` (optionally with ``WITH`` or set
operations), contains no write, DDL, ``PRAGMA``, ``ATTACH``, ``COPY``, ``SELECT INTO``, row lock
or transaction control anywhere in its tree (a ``DELETE`` inside a CTE counts), calls no function
with side effects or file access, and reads only allowed tables. Layers 2 and 3 (a read-only
connection, a timeout and a row cap) live in :mod:`toolrag.tools.sql.db`; this layer only gives
early, precise refusals the model can act on.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import NoReturn

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope

from toolrag.tools.result import ErrorCode

# sqlglot's compiled parser holds the GIL while it parses: 18 KB of odd SQL stalled every
# other thread for 0.4 s. Real queries a model writes stay far below this.
MAX_SQL_CHARS = 10_000

_FORBIDDEN_NODES: tuple[type, ...] = (
    exp.DML,  # insert, update, delete, merge
    exp.DDL,  # create, ...
    exp.Drop,
    exp.Alter,
    exp.Command,  # anything sqlglot could not parse: VACUUM, EXPLAIN, GRANT, ...
    exp.Pragma,
    exp.Attach,
    exp.Detach,
    exp.Copy,
    exp.Into,  # SELECT ... INTO new_table
    exp.Lock,  # SELECT ... FOR UPDATE
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Set,
    exp.Use,
)

# Functions that write, read files, sleep, signal other sessions or run SQL given as text.
_FORBIDDEN_FUNCTIONS = frozenset(
    {
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "sqlite_compileoption_get",
        "lo_import",
        "lo_export",
        "lo_unlink",
        "lo_create",
        "dblink",
        "dblink_exec",
        "set_config",
        "nextval",
        "setval",
        "query_to_xml",
        "query_to_xml_and_xmlschema",
        "table_to_xml",
        "database_to_xml",
        "cursor_to_xml",
        "sleep",
        "benchmark",
        "xp_cmdshell",
        "randomblob",  # memory bombs: randomblob(1e9) allocates a gigabyte
        "zeroblob",
    }
)
_FORBIDDEN_PREFIXES = ("pg_", "pragma_", "sqlite_", "lo_", "dblink", "txid_", "current_setting")
# Tables of the database engine or of toolrag itself: never readable, whatever the allow-list.
SYSTEM_TABLE_PREFIXES = ("sqlite_", "pg_", "_toolrag_")
_SYSTEM_SCHEMAS = frozenset({"information_schema", "pg_catalog", "pg_toast", "temp"})
# Functions whose output grows with a width or count argument, in one database step that no
# timeout can interrupt (``printf('%.*c', 2000000000, 'x')`` spends 18 s building 2 GB): the
# width must be a literal of at most MAX_WIDTH.
MAX_WIDTH = 10_000
_FORMAT_FUNCTIONS = frozenset({"printf", "format"})
_PRINTF_SPEC = re.compile(r"%[-+ 0#,!]*+(\*|\d{1,12})?(?:\.(\*|\d{1,12}))?")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class SQLRejected(Exception):
    """A statement the guard refuses, with what the model should do instead."""

    code: ErrorCode
    message: str
    suggestion: str


@dataclass
class CheckedSQL:
    """A statement that passed layer 1, with the tables it reads."""

    sql: str
    tables: list[str] = field(default_factory=list)
    ctes: list[str] = field(default_factory=list)  # the CTE names the statement reads


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(node.sql_name()).lower()


def _is_forbidden_function(name: str) -> bool:
    return name in _FORBIDDEN_FUNCTIONS or name.startswith(_FORBIDDEN_PREFIXES)


def _check_text(sql: str) -> str:
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise SQLRejected(
            ErrorCode.INVALID_ARGUMENT, "The SQL is empty.", "Write one SELECT statement."
        )
    if len(text) > MAX_SQL_CHARS:
        raise SQLRejected(
            ErrorCode.TOO_LARGE,
            f"The SQL is {len(text)} characters long; the limit is {MAX_SQL_CHARS}.",
            "Write a shorter query: select the columns you need and filter with WHERE.",
        )
    if text.isascii():  # the common case: only C0 controls and DEL can hide anything
        bad = _ASCII_CONTROL.search(text)
        if bad:
            raise SQLRejected(
                ErrorCode.INVALID_ARGUMENT,
                f"The SQL contains the invisible or control character U+{ord(bad.group()):04X}.",
                "Retype the query in plain ASCII.",
            )
        return text
    for ch in text:
        cat = unicodedata.category(ch)
        if (cat == "Cc" and ch not in "\t\n\r") or cat in ("Cf", "Co", "Cs"):
            raise SQLRejected(
                ErrorCode.INVALID_ARGUMENT,
                f"The SQL contains the invisible or control character U+{ord(ch):04X}.",
                "Retype the query in plain ASCII.",
            )
    if unicodedata.normalize("NFKC", text) != text:
        raise SQLRejected(
            ErrorCode.INVALID_ARGUMENT,
            "The SQL contains look-alike Unicode characters (fullwidth or compatibility "
            "forms) that a database would read differently.",
            "Retype keywords and names in plain ASCII.",
        )
    return text


@functools.cache
def _dialect(name: str) -> Dialect:
    return Dialect.get_or_raise(name)


def check_select(
    sql: str,
    dialect: str = "sqlite",
    allowed_tables: Collection[str] | None = None,
    known_tables: Collection[str] | None = None,
) -> CheckedSQL:
    """Parse ``sql`` and refuse anything but one read-only query over allowed tables.

    ``allowed_tables``: lower-case names the query may read (None: any). ``known_tables``:
    every table the database has, to tell "not allowed" from "does not exist".
    """
    text = _check_text(sql)
    try:
        statements = [s for s in _dialect(dialect).parse(text) if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0][:300]
        raise SQLRejected(
            ErrorCode.QUERY_ERROR,
            f"The SQL does not parse: {first}",
            "Write one valid SELECT statement.",
        ) from exc
    except RecursionError as exc:
        raise SQLRejected(
            ErrorCode.INVALID_ARGUMENT,
            "The SQL is nested too deeply to check.",
            "Write a flatter query: use WITH for intermediate results.",
        ) from exc
    if len(statements) != 1:
        raise SQLRejected(
            ErrorCode.FORBIDDEN,
            f"Exactly one statement is allowed; got {len(statements)}.",
            "Send a single SELECT statement without ';' separators.",
        )
    tree = statements[0]
    if not isinstance(tree, exp.Select | exp.SetOperation):
        raise SQLRejected(
            ErrorCode.FORBIDDEN,
            f"Only SELECT queries are allowed; this statement is {tree.key.upper()}.",
            "This database is read-only: ask a SELECT question instead.",
        )
    table_nodes: list[exp.Table] = []
    for node in tree.walk():  # one pass over the tree: forbidden nodes, functions, tables
        if isinstance(node, _FORBIDDEN_NODES):
            raise SQLRejected(
                ErrorCode.FORBIDDEN,
                f"The query contains a {node.key.upper()} clause, which is not read-only.",
                "Use a plain SELECT (WITH and UNION are fine) without writes, INTO or locks.",
            )
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if _is_forbidden_function(name):
                raise SQLRejected(
                    ErrorCode.FORBIDDEN,
                    f"The function {name}() is not allowed (side effects, files or sessions).",
                    "Use ordinary SQL functions: aggregates, string, date and math functions.",
                )
            _check_width(node, name)
        elif isinstance(node, exp.In) and node.args.get("field") is not None:
            raise SQLRejected(  # SQLite's "x IN some_table" names a table as a column
                ErrorCode.FORBIDDEN,
                "The form 'value IN table_name' is not allowed.",
                "Write value IN (SELECT column FROM table_name) instead.",
            )
        elif isinstance(node, exp.Table):
            table_nodes.append(node)
    cte_refs = _cte_references(tree)
    tables: list[str] = []
    ctes: list[str] = []
    for table in table_nodes:
        if isinstance(table.this, exp.Func):
            continue  # a table-valued function: its name was checked above
        name = str(table.name).lower()
        if not name:
            continue
        if id(table) in cte_refs:  # resolved, where it stands, to a CTE in scope
            if name not in ctes:
                ctes.append(name)
            continue
        if table.db or table.catalog:
            qualified = ".".join(p for p in (table.catalog, table.db, table.name) if p)
            if str(table.db).lower() not in ("main", "public") or table.catalog:
                raise SQLRejected(
                    ErrorCode.FORBIDDEN,
                    f"The table {qualified} is outside the allowed schema.",
                    "Use the unqualified table names that list_tables returns.",
                )
        if name not in tables:
            tables.append(name)
    allowed = None if allowed_tables is None else {t.lower() for t in allowed_tables}
    for name in tables:
        if name.startswith(SYSTEM_TABLE_PREFIXES) and (allowed is None or name not in allowed):
            raise SQLRejected(
                ErrorCode.FORBIDDEN,
                f"The table {name!r} belongs to the database engine and is not readable.",
                "Use list_tables and describe_table to see the schema.",
            )
    if allowed is not None:
        for name in tables:
            if name in allowed:
                continue
            listing = ", ".join(sorted(allowed))
            exists = known_tables is None or name in {t.lower() for t in known_tables}
            close = difflib.get_close_matches(name, sorted(allowed), n=1, cutoff=0.6)
            hint = f"Did you mean {close[0]}? " if close and not exists else ""
            raise SQLRejected(
                ErrorCode.FORBIDDEN if exists else ErrorCode.NOT_FOUND,
                f"The table {name!r} is "
                + ("not allowed for this tool." if exists else "not in this database."),
                f"{hint}Use one of these tables: {listing}.",
            )
    return CheckedSQL(sql=text, tables=tables, ctes=ctes)


def _cte_references(tree: exp.Expression) -> set[int]:
    """The ids of the table references that name a CTE visible where they stand.

    sqlglot's scope module resolves each reference against the CTEs of its own scope and of
    the scopes around it, so a CTE defined inside a subquery does not hide a real table of the
    same name outside it. A statement whose scopes cannot be built has no CTE references:
    every name is then checked as a real table (a refusal, never a bypass).
    """
    refs: set[int] = set()
    try:
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, KeyError, ValueError):
        return refs
    for scope in scopes:
        for table in scope.tables:
            if table.db or table.catalog:
                continue  # main.projects names the real table, never a CTE
            # the CTE of this very name, and the alias maps to it: "FROM secret AS x, c AS x"
            # maps x to the CTE c, but the table named secret is still the real one
            cte = scope.cte_sources.get(str(table.name))
            source = scope.sources.get(table.alias_or_name)
            if isinstance(cte, Scope) and source is cte:
                refs.add(id(table))
    return refs


def _check_width(node: exp.Func, name: str) -> None:
    """Refuse a padding or format call whose output size is set by a large or computed width."""
    widths: list[exp.Expression | None] = []
    if name in _FORMAT_FUNCTIONS or isinstance(node, exp.Format):
        template = node.this if isinstance(node, exp.Format) else next(iter(node.expressions), None)
        if not (isinstance(template, exp.Literal) and template.is_string):
            _too_wide(name, "its format string must be a literal")
        total = 0
        for match in _PRINTF_SPEC.finditer(str(template.this)):
            for group in match.groups():
                if group == "*":
                    _too_wide(name, "a width or precision given as * is not allowed")
                total += int(group or 0)
        if total > MAX_WIDTH:
            _too_wide(name, f"its widths add up to {total:,}, over {MAX_WIDTH:,}")
        return
    if isinstance(node, exp.Repeat):
        widths = [node.args.get("times")]
    elif isinstance(node, exp.Pad):
        widths = [node.args.get("expression")]
    elif name in ("space", "replicate"):
        widths = list(node.expressions[-1:]) or [node.this]
    else:
        return
    for width in widths:
        if not (isinstance(width, exp.Literal) and not width.is_string):
            _too_wide(name, "its length must be a literal number")
        elif float(width.this) > MAX_WIDTH:
            _too_wide(name, f"a length of {width.this} is over {MAX_WIDTH:,}")


def _too_wide(name: str, why: str) -> NoReturn:
    raise SQLRejected(
        ErrorCode.TOO_LARGE,
        f"{name}() is refused: {why}, since its output grows with it.",
        f"Use a literal width of at most {MAX_WIDTH:,}, or select the values themselves.",
    )


class SelectGuard:
    """Layer 1 for one database and allow-list, with a verdict cache keyed by the exact text.

    Agents repeat queries (retries, repair turns, batch runs over similar questions); a
    statement already judged is not parsed again. The verdict depends only on the text, the
    dialect and the table lists, all fixed for one guard, so a cached verdict is the verdict.
    ``cache_size=0`` parses every call.
    """

    def __init__(
        self,
        dialect: str,
        allowed_tables: Collection[str] | None,
        known_tables: Collection[str] | None,
        cache_size: int = 1024,
    ) -> None:
        self.dialect = dialect
        self.allowed_tables = None if allowed_tables is None else frozenset(allowed_tables)
        self.known_tables = None if known_tables is None else frozenset(known_tables)
        self._verdict = (
            functools.lru_cache(maxsize=cache_size)(self._judge) if cache_size else self._judge
        )

    def _judge(self, sql: str) -> CheckedSQL | SQLRejected:
        try:
            return check_select(sql, self.dialect, self.allowed_tables, self.known_tables)
        except SQLRejected as exc:
            return exc

    def check(self, sql: str) -> CheckedSQL:
        """The checked statement, or :class:`SQLRejected` raised with the reason."""
        verdict = self._verdict(sql)
        if isinstance(verdict, SQLRejected):
            raise replace(verdict)  # a fresh exception each time: no shared traceback
        return verdict

    def cache_info(self) -> str:
        info = getattr(self._verdict, "cache_info", None)
        return str(info()) if info else "no cache"
