"""The sample's sources agree (toolrag.sample.check_sample), and one planted contradiction of
each kind is reported under its own rule: no LanceDB, no models, the database built in memory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from toolrag.sample import Finding, check_sample
from toolrag.sample.consistency import HELD_OUT_QUESTIONS

from ..conftest import DATA, REPO


def _show(findings: list[Finding]) -> str:
    return "\n".join(f"{f.rule}: {f.where}: {f.detail}" for f in findings)


def test_the_sample_agrees_with_itself() -> None:
    findings = check_sample(DATA, REPO / "toolspecs")
    assert findings == [], "\n" + _show(findings)


def _replace(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def plant(data: Path) -> None:
        path = data / rel
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} is not once in {rel}"
        path.write_text(text.replace(old, new), encoding="utf-8")

    return plant


PLANTS = {
    # an RFI closed in one document while it is open everywhere else
    "status_mismatch": _replace(
        "documents/GRB-101/GRB-101-MIN-001.md", "remains **open**", "is **closed**"
    ),
    # a sheet note citing an RFI that does not exist
    "unknown_reference": _replace(
        "blueprints/sheets.yaml", "PENDING RFI-107-031", "PENDING RFI-107-099"
    ),
    # an invoice that takes Evergreen past its GRB-108 subcontract
    "invoice_over_subcontract": _replace(
        "db/seed.sql",
        "'2026-01-04', 165864.00, 'approved'),",
        "'2026-01-04', 165864.00, 'approved'),\n"
        "    ('INV-V07-2025-0399', 'GRB-108', 'V07', '2025-12-12', '2026-01-11', 500000.00, "
        "'approved'),",
    ),
    # a mobilized, excavating project reported idle
    "site_phase": _replace(
        "api/site.yaml",
        'phase: "excavation, shoring and tower crane foundation", crew_count: 27,',
        'phase: "preconstruction (no site work)", crew_count: 0,',
    ),
    # a reinforcing plan revised after its concrete is planned to be done
    "sheet_after_work": _replace(
        "blueprints/sheets.yaml",
        "  title: CLARIFIER WALL REINFORCING PLAN\n  revision: 1\n  revision_date: 2025-09-26",
        "  title: CLARIFIER WALL REINFORCING PLAN\n  revision: 1\n  revision_date: 2026-07-24",
    ),
    # closeout minutes counting from the contract date before the change order's 5 days
    "substantial_completion": _replace(
        "documents/GRB-104/GRB-104-MIN-001.md",
        "12 days ahead of the revised contract date of December 24, 2025 (the original "
        "December 19, 2025 plus the 5 days added by CO-104-01)",
        "one week ahead of the contract date of December 19, 2025",
    ),
    # an expected answer with a number its source document does not have
    "question_source": _replace(
        "questions/test.jsonl", "(Class B, 5-inch slab,", "(Class B, 6-inch slab,"
    ),
    # an invoice received after the data date
    "after_data_date": _replace(
        "db/seed.sql",
        "('INV-V10-2025-0358', 'GRB-112', 'V10', '2025-12-11', '2026-01-10',",
        "('INV-V10-2025-0358', 'GRB-112', 'V10', '2025-12-18', '2026-01-17',",
    ),
}


@pytest.mark.parametrize("rule", sorted(PLANTS))
def test_a_planted_contradiction_is_reported_under_its_rule(rule: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns(*HELD_OUT_QUESTIONS))
    PLANTS[rule](data)
    findings = check_sample(data, REPO / "toolspecs")
    assert findings, f"the planted {rule} contradiction went unnoticed"
    assert {f.rule for f in findings} == {rule}, "\n" + _show(findings)
