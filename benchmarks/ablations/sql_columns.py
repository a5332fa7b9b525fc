"""Columns a query names that its tables lack: how often ``run_sql`` puts in the right one.

For every column of two databases (the sample's and Chinook's), the column is written as a
small model miswrites one, by five mechanical rules that know nothing of the matcher:

- ``prefixed``: the table's singular name added (``name`` in ``vendors`` -> ``vendor_name``);
- ``dropped``: a word of a several-word name left out (``contract_amount`` -> ``amount``);
- ``synonym``: a word swapped for a common synonym (amount/value/total/cost/price,
  date/day/time, id/number/no/code, name/title, count/quantity);
- ``typo``: one letter dropped from the name's longest word;
- ``other_table``: a column of another table that this table lacks (no right answer: any
  rename is wrong).

Each is then matched as ``run_sql`` does (:func:`toolrag.tools.sql.columns.renamed_columns`):
``runs`` counts the sure matches the query runs with, ``suggests`` every match, sure or only
suggested in the error; the baseline takes difflib's closest name at the 0.8 cutoff of the
old "Did you mean" hint. A rename is right when it names the original column. What matters is
the wrong ones: a wrong column runs, and its result is read as an answer.

    python -m benchmarks.ablations.sql_columns

Writes ``benchmarks/results/sql_columns.json``.
"""

from __future__ import annotations

import difflib
import re
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.results import write_result
from toolrag.sample import build_chinook_sqlite
from toolrag.tools.sql import build_sqlite, renamed_columns

ROOT = Path(__file__).resolve().parents[2]
SYNONYMS = [
    ("amount", "value", "total", "cost", "price"),
    ("date", "day", "time"),
    ("id", "number", "no", "code"),
    ("name", "title"),
    ("count", "quantity"),
]
FAMILIES = ("prefixed", "dropped", "synonym", "typo", "other_table")


def schema_of(db: Path) -> dict[str, list[str]]:
    with sqlite3.connect(db) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE '\\_%' ESCAPE '\\'"
            )
        ]
        return {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in tables}


def _parts(name: str) -> tuple[list[str], str]:
    """A name's words as written and its separator ("" for CamelCase)."""
    if "_" in name:
        return name.split("_"), "_"
    return re.findall(r"[A-Z]+[a-z0-9]*|[a-z0-9]+", name) or [name], ""


def _join(words: list[str], sep: str) -> str:
    if sep:
        return sep.join(words)
    return "".join(w[:1].upper() + w[1:] for w in words)


def _singular(table: str) -> str:
    low = table.lower()
    if low.endswith("ies"):
        return low[:-3] + "y"
    return low[:-1] if low.endswith("s") and not low.endswith("ss") else low


def miswritten(table: str, column: str, schema: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(family, miswritten name) for one column; a name the table has is never kept."""
    words, sep = _parts(column)
    out: list[tuple[str, str]] = []
    head = _singular(table)
    if head not in [w.lower() for w in words]:
        out.append(("prefixed", _join([head if sep else head.capitalize(), *words], sep)))
    if len(words) > 1:
        for i in range(len(words)):
            out.append(("dropped", _join(words[:i] + words[i + 1 :], sep)))
    for i, word in enumerate(words):
        for group in SYNONYMS:
            if word.lower() in group:
                for other in group:
                    if other != word.lower():
                        swapped = other if word.islower() else other.capitalize()
                        out.append(("synonym", _join([*words[:i], swapped, *words[i + 1 :]], sep)))
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    if len(words[longest]) >= 5:
        w = words[longest]
        out.append(("typo", _join([*words[:longest], w[:2] + w[3:], *words[longest + 1 :]], sep)))
    own = {c.lower() for c in schema[table]}
    return [(f, n) for f, n in dict.fromkeys(out) if n and n.lower() not in own]


def cases(schema: dict[str, list[str]]) -> list[dict[str, Any]]:
    out = []
    for table, columns in schema.items():
        own = {c.lower() for c in columns}
        for column in columns:
            for family, name in miswritten(table, column, schema):
                out.append({"table": table, "written": name, "means": column, "family": family})
        others = sorted({c for t, cs in schema.items() if t != table for c in cs} - set(columns))
        for name in others:
            if name.lower() not in own:
                out.append(
                    {"table": table, "written": name, "means": None, "family": "other_table"}
                )
    return out


def toolrag_runs(case: dict[str, Any], schema: dict[str, list[str]]) -> str | None:
    """The column ``run_sql`` runs the query with (a sure match), or None."""
    found = renamed_columns(f'SELECT "{case["written"]}" FROM "{case["table"]}"', schema)
    return found[1][0].column if found and found[1][0].sure else None


def toolrag_suggests(case: dict[str, Any], schema: dict[str, list[str]]) -> str | None:
    """The column ``run_sql`` runs with or suggests in its error, or None."""
    found = renamed_columns(f'SELECT "{case["written"]}" FROM "{case["table"]}"', schema)
    return found[1][0].column if found else None


def difflib_match(case: dict[str, Any], schema: dict[str, list[str]]) -> str | None:
    close = difflib.get_close_matches(case["written"], schema[case["table"]], n=1, cutoff=0.8)
    return close[0] if close else None


def score(all_cases: list[dict[str, Any]], schema: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    methods = (
        ("runs", toolrag_runs),
        ("suggests", toolrag_suggests),
        ("difflib_0.8", difflib_match),
    )
    for method, match in methods:
        per: dict[str, Counter[str]] = {f: Counter() for f in FAMILIES}
        for case in all_cases:
            got = match(case, schema)
            verdict = "none" if got is None else ("right" if got == case["means"] else "wrong")
            per[case["family"]][verdict] += 1
        total: Counter[str] = sum(per.values(), Counter())
        out[method] = {
            f: {
                "n": sum(c.values()),
                "right": c["right"],
                "wrong": c["wrong"],
                "none": c["none"],
                "precision": round(c["right"] / (c["right"] + c["wrong"]), 3)
                if c["right"] + c["wrong"]
                else None,
            }
            for f, c in [*per.items(), ("all", total)]
        }
    return out


def main() -> None:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample.sqlite"
        build_sqlite(ROOT / "data" / "db" / "seed.sql", sample)
        chinook = build_chinook_sqlite(Path(tmp) / "chinook.sqlite")
        for name, db in (("sample", sample), ("chinook", Path(chinook))):
            schema = schema_of(db)
            all_cases = cases(schema)
            figures[name] = {
                "tables": len(schema),
                "columns": sum(len(c) for c in schema.values()),
                "cases": len(all_cases),
                **score(all_cases, schema),
            }
    write_result("sql_columns", figures, module="ablations.sql_columns")
    for name, f in figures.items():
        for method in ("runs", "suggests", "difflib_0.8"):
            a = f[method]["all"]
            print(f"{name:8} {method:12} right {a['right']} wrong {a['wrong']} none {a['none']}")


if __name__ == "__main__":
    main()
