"""The text values an empty SQL query compared, and where they are (toolrag.tools.sql.literals)."""

from __future__ import annotations

from toolrag.tools.sql.literals import MAX_LOOKUPS, compared_literals, respell, value_hints


def test_compared_literals_reads_equality_in_and_like_without_wildcards() -> None:
    sql = (
        "SELECT * FROM p JOIN v ON v.id = p.vid WHERE p.kind = 'lump sum' AND 'open' = p.status "
        "AND v.city IN ('Millbrook', 'Bayview') AND v.name LIKE 'Acme%' AND p.code LIKE 'GRB-101'"
    )
    assert compared_literals(sql) == [
        ("kind", "lump sum"),
        ("status", "open"),
        ("city", "Millbrook"),
    ]
    assert compared_literals("SELECT 1 WHERE x = 'a'") == [("x", "a")]
    assert compared_literals("SELECT * FROM t WHERE n = 3") == []
    assert compared_literals("SELEC nonsense ((") == []


def test_value_hints_name_the_column_holding_a_value() -> None:
    table = {("projects", "contract_type"): "lump sum", ("invoices", "status"): "disputed"}

    def find(t: str, c: str, value: str) -> str | None:
        stored = table.get((t, c))
        return stored if stored is not None and stored.lower() == value.lower() else None

    columns = {"projects": ["name", "project_type", "contract_type"], "invoices": ["status"]}
    hints = value_hints([("project_type", "lump sum")], columns, find)
    assert hints == [
        "'lump sum' is not a value of project_type; it is found in projects.contract_type."
    ]
    hints = value_hints([("status", "Disputed")], columns, find)
    assert hints == [
        "'Disputed' is stored as 'disputed' in invoices.status (values are case-sensitive)."
    ]
    assert value_hints([("contract_type", "lump sum")], columns, find) == []  # there already
    assert value_hints([("name", "nobody")], columns, find) == []


def test_value_hints_read_a_bounded_number_of_columns() -> None:
    reads: list[str] = []

    def find(t: str, c: str, value: str) -> str | None:
        reads.append(c)
        return None

    columns = {f"t{n}": [f"c{m}" for m in range(30)] for n in range(10)}
    value_hints([("a", "x"), ("b", "y"), ("c", "z")], columns, find)
    assert len(reads) == MAX_LOOKUPS


def test_a_value_stored_where_the_query_looked_leaves_reads_for_the_next() -> None:
    """The column a query compared is read first; a value stored there as written ends its
    lookup, so a second value still gets its hint within the bound."""
    reads: list[str] = []

    def find(t: str, c: str, value: str) -> str | None:
        reads.append(c)
        if value == "GRB-106" and c == "project_code":
            return "GRB-106"
        return "Summit Mechanical LLC" if (value, c) == ("Summit Mechanical", "name") else None

    columns = {f"t{n}": [f"c{m}" for m in range(20)] + ["name", "project_code"] for n in range(4)}
    hints = value_hints([("project_code", "GRB-106"), ("name", "Summit Mechanical")], columns, find)
    assert reads[:2] == ["project_code", "name"]  # one read for the first value
    assert hints == [
        "'Summit Mechanical' is stored as 'Summit Mechanical LLC' in t0.name (its full value)."
    ]


def test_respell_puts_the_stored_values_where_the_query_compared_them() -> None:
    fixes = {("name", "Summit Mechanical"): "Summit Mechanical LLC", ("status", "Open"): "open"}
    sql = (
        "SELECT * FROM v WHERE v.name IN ('Summit Mechanical', 'Other') AND 'Open' = v.status "
        "AND v.city = 'Summit Mechanical' AND v.name LIKE 'Summit Mechanical%'"
    )
    assert respell(sql, fixes) == (
        "SELECT * FROM v WHERE v.name IN ('Summit Mechanical LLC', 'Other') AND 'open' = "
        "v.status AND v.city = 'Summit Mechanical' AND v.name LIKE 'Summit Mechanical%'"
    )  # only in the column it was found in; a LIKE pattern is the model's own
    assert respell("SELECT * FROM v WHERE v.name = 'Nobody'", fixes) is None
    assert respell("SELEC nonsense ((", fixes) is None
