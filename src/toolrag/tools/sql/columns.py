"""Columns a query names that its tables do not have: the one column each one means.

A small model writes ``s.contract_value`` for ``subcontracts.contract_amount``,
``p.project_code`` for ``projects.code`` and ``vendor_name`` for ``vendors.name``; the
database rejects the query, and the model, shown the columns, often writes the same name
again. :func:`renamed_columns` reads the query with sqlglot's scopes, finds each column
that no table it reads has (nor any output column or alias of the query), and names the one
column of the table it belongs to that it most likely means, by the first of these rules that
finds any column (when it finds several, nothing is guessed):

1. **the table's name dropped**: the unknown name without the words of its table's name
   equals one column's name without them (``project_code`` in ``projects`` is ``code``,
   ``vendor_name`` in ``vendors`` is ``name``, ``invoice_status`` in ``invoices`` is
   ``status``);
2. **a misspelling**: a column is spelled nearly the same (difflib ratio 0.85);
3. **in one column's name**: the unknown name's words, without the table's, are all in one
   column's (``subcontract_amount`` in ``subcontracts`` is ``contract_amount``);
4. **a distinctive word shared**: one column shares a word with it that few columns of the
   database carry (``contract_value`` and ``contract_amount`` share "contract", in 3 of 50
   columns; ``executed_date`` and ``co_date`` share only "date", in 8: no match).

The first two are sure: the caller runs the query renamed, through the same checks, and says
in its result what it renamed. The last two are likely but not sure (``contract_type`` in a
table with ``contract_amount`` shares "contract" too): the caller only suggests them in its
error. Nothing is renamed unless every unknown column has its match.
``benchmarks/ablations/sql_columns.py`` measures each rule on two databases.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, build_scope

MIN_DISTINCT = 0.3  # rule 2: the shared words' weight, 1 / (columns carrying the word) summed
MIN_SPELLING = 0.85  # rule 3: difflib's ratio between the names
MAX_UNKNOWN = 4  # unknown columns one query may rename
#: the matches a query runs with; the others are suggested in the error
SURE = ("the table's name dropped", "a misspelling")


@dataclass(frozen=True)
class Rename:
    """One unknown column and the column it was taken for."""

    table: str
    written: str
    column: str
    why: str  # "the table's name dropped", "a misspelling", "in one column's name", ...
    sure: bool  # the first two: the query runs renamed; the others are only suggested

    def describe(self) -> str:
        return f"{self.written} -> {self.table}.{self.column} ({self.why})"


def words(name: str) -> list[str]:
    """The words of an identifier, lower case and singular: ``ContractValue`` and
    ``contract_values`` are both ``["contract", "value"]``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    out = []
    for word in re.split(r"[^A-Za-z0-9]+", spaced.lower()):
        if not word:
            continue
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        out.append(word)
    return out


def renamed_columns(
    sql: str, schema: Mapping[str, Sequence[str]], dialect: str | None = None
) -> tuple[str, list[Rename]] | None:
    """``sql`` with each column its tables lack renamed to the column it means, and the
    renames; None when no column is unknown, one has no single match, or the SQL does not
    parse. ``schema``: every readable table -> its column names (the weights of rule 2 are
    counted over all of them)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        root = build_scope(tree)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    except Exception:  # sqlglot's OptimizeError and kin: a query its scopes cannot read
        return None
    if root is None:
        return None
    tables = {t.lower(): t for t in schema}
    columns = {t.lower(): list(cols) for t, cols in schema.items()}
    # the query's own output names: aliases (ORDER BY total) and CTE or derived columns
    aliases = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    aliases.update(c.name.lower() for t in tree.find_all(exp.TableAlias) for c in t.columns)
    weight = Counter(w for cols in schema.values() for c in cols for w in set(words(c)))

    unknown: list[tuple[exp.Column, Scope, list[str]]] = []
    for scope in root.traverse():
        for column in scope.columns:
            name = column.name
            if not name or name == "*" or name.lower() in aliases:
                continue
            candidates = _tables_of(column, scope, tables)
            if not candidates or any(
                name.lower() in {c.lower() for c in columns[t]} for t in candidates
            ):
                continue  # a column of its table, or one of a derived table or CTE
            unknown.append((column, scope, candidates))
    if len({c.sql() for c, _, _ in unknown}) > MAX_UNKNOWN:
        return None  # not a slip of a name or two: no guessing
    renames: list[Rename] = []
    matches: dict[tuple[str, tuple[str, ...]], tuple[str, str, str] | None] = {}
    for column, scope, candidates in unknown:
        key = (column.name, tuple(candidates))
        if key not in matches:
            matches[key] = _match(column.name, candidates, columns, weight)
        match = matches[key]
        if match is None:
            return None
        table, new, why = match
        renames.append(
            Rename(table=tables[table], written=column.sql(), column=new, why=why, sure=why in SURE)
        )
        column.set("this", exp.to_identifier(new, quoted=_needs_quotes(new)))
        if not column.table and len(candidates) > 1:  # qualified, as the name may repeat
            alias = _alias_of(scope, table)
            if alias:
                column.set("table", exp.to_identifier(alias, quoted=_needs_quotes(alias)))
    if not renames:
        return None
    return tree.sql(dialect=dialect), list(dict.fromkeys(renames))


def _tables_of(column: exp.Column, scope: Scope, tables: Mapping[str, str]) -> list[str]:
    """The readable tables (lower case) a column may belong to: its qualifier's table, else
    every table its scope and the scopes around it read (a correlated subquery reads the
    outer query's). Empty when it may be a derived table's or a CTE's column."""
    if column.table:
        source = scope.sources.get(column.table)
        if isinstance(source, exp.Table) and source.name.lower() in tables:
            return [source.name.lower()]
        return []
    found: list[str] = []
    here: Scope | None = scope
    while here is not None:
        for source in here.sources.values():
            if not isinstance(source, exp.Table) or source.name.lower() not in tables:
                return []  # a derived table, a CTE or a table it cannot read
            if source.name.lower() not in found:
                found.append(source.name.lower())
        here = here.parent
    return found


def _match(
    name: str,
    candidates: Sequence[str],
    columns: Mapping[str, Sequence[str]],
    weight: Counter[str],
) -> tuple[str, str, str] | None:
    """The (table, column, rule) ``name`` means among the ``candidates`` tables' columns, by
    the first rule that finds exactly one; None when none does, or the first that finds any
    finds several."""
    written = words(name)
    equal, inside = set(), set()
    for table in candidates:
        own = set(words(table))
        rest = [w for w in written if w not in own]
        if not rest:
            continue
        for col in columns[table]:
            theirs = [w for w in words(col) if w not in own] or words(col)
            if rest == theirs:
                equal.add((table, col))
            elif set(rest) <= set(theirs):
                inside.add((table, col))
    close = {
        (table, col)
        for table in candidates
        for col in columns[table]
        if difflib.SequenceMatcher(None, name.lower(), col.lower()).ratio() >= MIN_SPELLING
    }
    scored: list[tuple[float, str, str]] = []
    for table in candidates:
        own = set(words(table))
        for col in columns[table]:
            shared = (set(written) & set(words(col))) - own  # the table's own words do not count
            score = sum(1 / weight[w] for w in shared if weight[w])
            if score:
                scored.append((score, table, col))
    scored.sort(reverse=True)
    distinct = (
        {(scored[0][1], scored[0][2])}
        if scored
        and scored[0][0] >= MIN_DISTINCT
        and (len(scored) == 1 or scored[1][0] <= scored[0][0] / 2)
        else set()
    )
    for found, why in (
        (equal, "the table's name dropped"),
        (close, "a misspelling"),
        (inside, "in one column's name"),
        (distinct, "a distinctive word shared"),
    ):
        if len(found) == 1:
            table, col = next(iter(found))
            return table, col, why
        if found:
            return None
    return None


def _alias_of(scope: Scope, table: str) -> str | None:
    """The name ``table`` goes by in ``scope`` or the scopes around it (its alias)."""
    here: Scope | None = scope
    while here is not None:
        for name, source in here.sources.items():
            if isinstance(source, exp.Table) and source.name.lower() == table:
                return str(name)
        here = here.parent
    return None


def _needs_quotes(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is None
