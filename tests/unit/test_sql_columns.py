"""Columns a query names that its tables lack, and the one column each means: a match only
when exactly one column fits, by the table's name dropped, a distinctive shared word or a
misspelling; no guess from a common word, nor among several columns."""

from __future__ import annotations

import pytest

from toolrag.tools.sql.columns import renamed_columns, words

COLUMNS = {
    "projects": "code name client contract_type contract_value start_date status",
    "vendors": "vendor_id name trade contact_name city",
    "subcontracts": "subcontract_id project_code vendor_id scope contract_amount executed_date",
    "budgets": "project_code cost_code category budgeted_amount",
    "actual_costs": "cost_id project_code cost_code vendor_id cost_date amount",
    "invoices": "invoice_no project_code vendor_id invoice_date due_date amount status",
    "change_orders": "co_number project_code title amount days_added status co_date",
}
SCHEMA = {table: columns.split() for table, columns in COLUMNS.items()}


def test_words_are_lower_case_and_singular() -> None:
    assert words("ContractValues") == ["contract", "value"]
    assert words("change_orders") == ["change", "order"]
    assert words("categories") == ["category"]
    assert words("address") == ["address"]


@pytest.mark.parametrize(
    ("sql", "fixed", "why"),
    [
        (
            "SELECT s.contract_value FROM subcontracts s WHERE s.project_code = 'GRB-110'",
            "SELECT s.contract_amount FROM subcontracts AS s WHERE s.project_code = 'GRB-110'",
            "a distinctive word shared",
        ),
        ("SELECT vendor_name FROM vendors", "SELECT name FROM vendors", "the table's name dropped"),
        (
            "SELECT * FROM invoices WHERE invoice_status = 'disputed'",
            "SELECT * FROM invoices WHERE status = 'disputed'",
            "the table's name dropped",
        ),
        (
            "SELECT b.subcontract_amount FROM subcontracts b",
            "SELECT b.contract_amount FROM subcontracts AS b",
            "a misspelling",
        ),
        (
            "SELECT contract_amout FROM subcontracts",
            "SELECT contract_amount FROM subcontracts",
            "a misspelling",
        ),
        (
            "SELECT * FROM budgets WHERE cost_code = '03-3000' ORDER BY budget_amount",
            "SELECT * FROM budgets WHERE cost_code = '03-3000' ORDER BY budgeted_amount",
            "a misspelling",
        ),
        (
            "SELECT name, contact FROM vendors",
            "SELECT name, contact_name FROM vendors",
            "in one column's name",
        ),
        (
            "SELECT projct_status FROM projects",
            "SELECT status FROM projects",
            "a distinctive word shared",
        ),
    ],
)
def test_the_one_column_meant_is_put_in(sql: str, fixed: str, why: str) -> None:
    found = renamed_columns(sql, SCHEMA, "sqlite")
    assert found is not None
    assert found[0] == fixed
    assert [r.why for r in found[1]] == [why]
    assert found[1][0].sure == (why in ("the table's name dropped", "a misspelling"))


def test_an_unqualified_column_of_a_join_is_qualified_with_its_table() -> None:
    schema = {"invoices": ["vendor_id", "amount", "name"], "vendors": ["vendor_id", "name"]}
    found = renamed_columns(
        "SELECT vendor_name FROM invoices i JOIN vendors v ON v.vendor_id = i.vendor_id",
        schema,
        "sqlite",
    )
    assert found is not None
    assert found[0].startswith("SELECT v.name FROM invoices AS i")
    assert found[1][0].describe() == "vendor_name -> vendors.name (the table's name dropped)"


@pytest.mark.parametrize(
    "sql",
    [
        # only "date" is shared, a word 6 columns carry
        "SELECT COUNT(*) FROM change_orders WHERE executed_date IS NULL",
        # cost_id, cost_code and cost_date: several columns could be meant
        "SELECT SUM(cost) FROM actual_costs",
        # a column no table has anything like
        "SELECT daily_liquidated_damages FROM projects",
        # one unknown column has its match, the other none: nothing is renamed
        "SELECT s.contract_value, s.liquidated FROM subcontracts s",
        # the query's own names are not unknown
        "SELECT SUM(amount) AS total FROM invoices ORDER BY total",
        "WITH t AS (SELECT amount AS amt FROM invoices) SELECT amt FROM t",
        # every column exists: nothing to rename
        "SELECT name FROM vendors",
        "SELECT FROM WHERE",
    ],
)
def test_no_guess_without_one_clear_match(sql: str) -> None:
    assert renamed_columns(sql, SCHEMA, "sqlite") is None
