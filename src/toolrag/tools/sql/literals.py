"""Where a query's text values are: the hint an empty SQL result carries.

A small model that filters ``projects.project_type = 'lump sum'`` gets no rows back, and with
no rows it guesses. The value is in the database, in another column (``contract_type``), or
spelled with other capitals. :func:`compared_literals` reads, with sqlglot, the text values a
query compares columns with (``=``, ``IN``, ``LIKE`` without wildcards); :func:`value_hints`
looks each one up, case-insensitively and then as whole words inside a stored value (a name
without its "LLC"), in the text columns of the tables the query reads (bound ``LIMIT`` reads,
a few values and columns at most), and says where it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

MAX_LITERALS = 3  # text values looked up per empty result
MAX_LITERAL_CHARS = 100
MAX_LOOKUPS = 40  # column reads per empty result, all values together


def compared_literals(sql: str, dialect: str | None = None) -> list[tuple[str | None, str]]:
    """The (column, text value) pairs ``sql`` compares: ``col = 'x'``, ``col IN ('x', 'y')``
    and ``col LIKE 'x'`` with no wildcard. Column None when the other side is not a plain
    column. Empty when the SQL does not parse."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return []
    found: list[tuple[str | None, str]] = []

    def add(column: exp.Expression, value: exp.Expression, like: bool = False) -> None:
        if isinstance(value, exp.Literal) and value.is_string:
            text = value.this
            if 0 < len(text) <= MAX_LITERAL_CHARS and not (like and any(c in text for c in "%_")):
                name = column.name if isinstance(column, exp.Column) else None
                if (name, text) not in found:
                    found.append((name, text))

    for node in tree.walk(bfs=False):  # in the order the SQL reads
        if not isinstance(node, exp.EQ | exp.Like | exp.ILike | exp.In):
            continue
        left = node.this
        if isinstance(node, exp.In):
            for value in node.expressions:
                add(left, value)
        else:
            like = isinstance(node, exp.Like | exp.ILike)
            add(left, node.expression, like)
            add(node.expression, left, like)
    return found[:MAX_LITERALS]


@dataclass
class ValueLookup:
    """Where an empty query's text values are: a sentence each for the model, and the values
    stored with another spelling in the very column the query compared (``(column, value)``
    -> stored value), which :func:`respell` can put in the query."""

    hints: list[str] = field(default_factory=list)
    respelled: dict[tuple[str, str], str] = field(default_factory=dict)


def value_hints(
    pairs: Sequence[tuple[str | None, str]],
    text_columns: dict[str, list[str]],
    find: Callable[[str, str, str], str | None],
) -> list[str]:
    """One sentence per text value found elsewhere than the query looked for it
    (:func:`look_up_values`)."""
    return look_up_values(pairs, text_columns, find).hints


def look_up_values(
    pairs: Sequence[tuple[str | None, str]],
    text_columns: dict[str, list[str]],
    find: Callable[[str, str, str], str | None],
) -> ValueLookup:
    """Where each text value of ``pairs`` is stored, and how.

    ``text_columns``: table -> its text columns, the tables the query reads first. ``find``
    (table, column, value) returns the stored spelling of ``value`` in that column, or None.
    """
    out = ValueLookup()
    lookups = 0
    for column, value in pairs:
        places: list[tuple[str, str, str]] = []
        columns = [(t, c) for t, cols in text_columns.items() for c in cols]
        columns.sort(key=lambda tc: tc[1] != column)  # the column the query looked in first
        for table, col in columns:
            if lookups >= MAX_LOOKUPS:
                break
            lookups += 1
            stored = find(table, col, value)
            if stored is not None:
                places.append((table, col, stored))
                if col == column and stored == value:
                    break  # stored just so where the query looked: no hint, no more reads
        if not places or any(c == column and s == value for _, c, s in places):
            continue  # not anywhere, or stored just so where the query looked
        spelled = [(t, c, s) for t, c, s in places if c == column]
        if spelled:  # the right column, other capitals or the full value
            t, c, s = spelled[0]
            why = "values are case-sensitive" if s.lower() == value.lower() else "its full value"
            out.hints.append(f"'{value}' is stored as '{s}' in {t}.{c} ({why}).")
            if column is not None and len({s for _, _, s in spelled}) == 1:
                out.respelled[(column, value)] = s
            continue
        where = ", ".join(f"{t}.{c}" + (f" (as '{s}')" if s != value else "") for t, c, s in places)
        here = f" is not a value of {column};" if column else ""
        out.hints.append(f"'{value}'{here} it is found in {where}.")
    return out


def respell(
    sql: str, respelled: dict[tuple[str, str], str], dialect: str | None = None
) -> str | None:
    """``sql`` with each text value compared to a column (``=``, ``IN``, ``LIKE`` without
    wildcards) replaced by its stored spelling in ``respelled``; None when nothing changed or
    the SQL does not parse."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    changed = False

    def swap(column: exp.Expression, value: exp.Expression) -> None:
        nonlocal changed
        if isinstance(column, exp.Column) and isinstance(value, exp.Literal) and value.is_string:
            stored = respelled.get((column.name, value.this))
            if stored is not None:
                value.replace(exp.Literal.string(stored))
                changed = True

    for node in list(tree.walk(bfs=False)):
        if isinstance(node, exp.In):
            for value in list(node.expressions):
                swap(node.this, value)
        elif isinstance(node, exp.EQ | exp.Like | exp.ILike):
            swap(node.this, node.expression)
            swap(node.expression, node.this)
    return tree.sql(dialect=dialect) if changed else None
