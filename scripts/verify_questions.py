"""Check data/questions/fresh.jsonl and unseen.jsonl against the raw sample data.

Every question has a check below that recomputes its answer_keywords and answer_ids from the
files themselves: SQL on a SQLite database built in memory from data/db/seed.sql, the milestone
CSVs in data/schedules, the sheet register data/blueprints/sheets.yaml, the field API's
data/api/site.yaml and data/domain.yaml, and regular expressions over data/documents. A
question's ``evidence`` ({file, quote} or a list of them) must quote its document verbatim; for
questions of kind documents, every keyword must appear in a quote.

unseen.jsonl is held out: problems found in it are reported by id, without values.
Run: .venv/bin/python scripts/verify_questions.py   (exit status 1 when anything is off)
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import re
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
FILES = ("fresh.jsonl", "unseen.jsonl")
HELD_OUT = "unseen.jsonl"
READ_TOOLS = frozenset(
    {
        "run_sql",
        "search_documents",
        "search_blueprints",
        "get_project_schedule",
        "list_projects",
        "get_site_status",
        "list_inspections",
        "get_inspection",
        "list_weather_delays",
        "list_rfis",
        "get_rfi_status",
    }
)
MIN_KINDS = {
    "sql_aggregate": 6,
    "sql_join": 5,
    "documents": 6,
    "sheets_dates": 5,
    "schedule_arithmetic": 5,
    "api": 5,
    "multi_tool": 6,
    "no_tool": 8,
}
MIN_THREE_TOOL = 2  # multi_tool questions that need three tools

Answer = tuple[list[str], list[str]]  # (answer_keywords, answer_ids)


@dataclass
class Data:
    """The raw sample data under one data directory."""

    root: Path
    db: sqlite3.Connection = field(init=False)
    domain: dict[str, Any] = field(init=False)
    site: dict[str, Any] = field(init=False)
    sheets: list[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.executescript((self.root / "db" / "seed.sql").read_text(encoding="utf-8-sig"))
        self.domain = _yaml(self.root / "domain.yaml")
        self.site = _yaml(self.root / "api" / "site.yaml")
        self.sheets = _yaml(self.root / "blueprints" / "sheets.yaml")

    def one(self, sql: str, *args: Any) -> tuple[Any, ...]:
        rows = self.db.execute(sql, args).fetchall()
        if len(rows) != 1:
            raise ValueError(f"expected one row, got {len(rows)}: {sql}")
        return tuple(rows[0])

    def col(self, sql: str, *args: Any) -> list[Any]:
        return [r[0] for r in self.db.execute(sql, args)]

    def milestone(self, project: str, name: str) -> dict[str, str]:
        rows = [r for r in self.schedule(project) if r["milestone"] == name]
        if len(rows) != 1:
            raise ValueError(f"{project}: {len(rows)} milestones named {name!r}")
        return rows[0]

    def schedule(self, project: str) -> list[dict[str, str]]:
        path = self.root / "schedules" / f"{project}.csv"
        with path.open(encoding="utf-8-sig", newline="") as fh:
            return list(csv.DictReader(fh))

    def text(self, rel: str) -> str:
        """A file by its path from the repository root (data/documents/...)."""
        return (self.root.parent / rel).read_text(encoding="utf-8-sig")

    def find(self, rel: str, pattern: str) -> tuple[str, ...]:
        """The groups of the one match of pattern in the file."""
        found = re.findall(pattern, self.text(rel))
        if len(found) != 1:
            raise ValueError(f"{rel}: {len(found)} matches of {pattern!r}")
        return found[0] if isinstance(found[0], tuple) else (found[0],)

    def sheet_numbers(
        self,
        start: str | None = None,
        end: str | None = None,
        project: str | None = None,
        discipline: str | None = None,
    ) -> list[str]:
        """Sheet numbers revised within [start, end] (inclusive), one project or discipline."""
        return sorted(
            {
                s["sheet_number"]
                for s in self.sheets
                if (project is None or s["project"] == project)
                and (discipline is None or s["discipline"] == discipline)
                and (start is None or str(s["revision_date"]) >= start)
                and (end is None or str(s["revision_date"]) <= end)
            }
        )

    def site_status(self, project: str) -> dict[str, Any]:
        (row,) = [s for s in self.site["site_status"] if s["project"] == project]
        return row

    def project(self, code: str) -> dict[str, Any]:
        (row,) = [p for p in self.domain["projects"] if p["code"] == code]
        return row

    def inspections(self, **match: Any) -> list[dict[str, Any]]:
        return [i for i in self.site["inspections"] if all(i[k] == v for k, v in match.items())]

    def delays(self, project: str | None = None) -> list[dict[str, Any]]:
        return [d for d in self.site["weather_delays"] if project in (None, d["project"])]

    def rfi_days_open(self, number: str) -> int:
        """days_open as the field API computes it: to the answer date, or to as_of."""
        (r,) = [r for r in self.domain["rfis"] if r["number"] == number]
        return ((r.get("answer_date") or self.site["as_of"]) - r["date"]).days


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8-sig"))


def num(value: Any) -> str:
    """A keyword for a number: plain digits, no separators or currency ($1,250.00 -> 1250)."""
    text = str(value).replace("$", "").replace(",", "").strip()
    return format(Decimal(text).normalize(), "f")


def days(start: str, end: str) -> int:
    return (dt.date.fromisoformat(end) - dt.date.fromisoformat(start)).days


def short(vendor: str) -> str:
    """A vendor's name as an answer writes it: without Co. or LLC."""
    return vendor.removesuffix(" LLC").removesuffix(" Co.")


# --------------------------------------------------------------------------------------------
# One check per question id: recompute (answer_keywords, answer_ids) from the data.

Check = Callable[[Data], Answer]
CHECKS: dict[str, Check] = {}


def check(qid: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        if qid in CHECKS:
            raise ValueError(f"two checks for {qid}")
        CHECKS[qid] = fn
        return fn

    return register


def keywords(*values: Any) -> Answer:
    return [str(v) for v in values], []


# sql_aggregate


@check("fq-001")
def _(d: Data) -> Answer:
    total, n = d.one(
        "SELECT SUM(budgeted_amount), COUNT(DISTINCT project_code) FROM budgets"
        " WHERE cost_code = '03-3000'"
    )
    return keywords(num(total), n)


@check("fq-002")
def _(d: Data) -> Answer:
    n, total = d.one(
        "SELECT COUNT(*), SUM(contract_amount) FROM subcontracts WHERE retainage_pct = 10"
    )
    return keywords(n, num(total))


@check("fq-003")
def _(d: Data) -> Answer:
    (avg,) = d.one("SELECT AVG(contract_value) FROM projects WHERE contract_type = 'lump sum'")
    return keywords(num(round(avg, 2)))


@check("fq-004")
def _(d: Data) -> Answer:
    (total,) = d.one(
        "SELECT SUM(b.budgeted_amount) FROM budgets b JOIN projects p ON p.code = b.project_code"
        " WHERE p.project_manager = 'Raj Patel' AND b.cost_code = '01-0000'"
    )
    return keywords(num(total))


@check("fq-005")
def _(d: Data) -> Answer:
    rows = d.db.execute(
        "SELECT project_code, amount FROM actual_costs"
        " WHERE cost_date BETWEEN '2025-11-01' AND '2025-11-30' ORDER BY amount DESC LIMIT 2"
    ).fetchall()
    if rows[0][1] == rows[1][1]:
        raise ValueError("no single largest entry")
    return keywords(num(rows[0][1]), rows[0][0])


@check("fq-006")
def _(d: Data) -> Answer:
    n, total = d.one("SELECT COUNT(*), SUM(amount) FROM change_orders WHERE days_added = 0")
    return keywords(n, num(total))


@check("fq-007")
def _(d: Data) -> Answer:
    n, total = d.one(
        "SELECT COUNT(*), SUM(amount) FROM invoices WHERE project_code = 'GRB-110'"
        " AND due_date BETWEEN '2026-01-01' AND '2026-01-31'"
    )
    return keywords(n, num(total))


@check("fq-008")
def _(d: Data) -> Answer:
    (total,) = d.one("SELECT SUM(contract_amount) FROM subcontracts WHERE project_code = 'GRB-112'")
    return keywords(num(total))


# sql_join

VENDOR_JOIN = " FROM invoices i JOIN vendors v ON v.vendor_id = i.vendor_id"
SUB_JOIN = " FROM subcontracts s JOIN vendors v ON v.vendor_id = s.vendor_id"


@check("fq-009")
def _(d: Data) -> Answer:
    rows = d.db.execute(
        "SELECT v.name, COUNT(*)" + VENDOR_JOIN + " WHERE i.project_code = 'GRB-103'"
        " GROUP BY v.name ORDER BY 2 DESC LIMIT 2"
    ).fetchall()
    if rows[0][1] == rows[1][1]:
        raise ValueError("a tie for the most invoices")
    return keywords(short(rows[0][0]), rows[0][1])


@check("fq-010")
def _(d: Data) -> Answer:
    name, amount = d.one(
        "SELECT v.name, i.amount" + VENDOR_JOIN + " WHERE i.project_code = 'GRB-112'"
        " AND i.status = 'disputed'"
    )
    return keywords(short(name), num(amount))


@check("fq-011")
def _(d: Data) -> Answer:
    names = d.col(
        "SELECT v.name" + SUB_JOIN + " WHERE s.project_code = 'GRB-106' INTERSECT"
        " SELECT v.name" + SUB_JOIN + " WHERE s.project_code = 'GRB-102' ORDER BY 1"
    )
    return keywords(*map(short, names))


@check("fq-012")
def _(d: Data) -> Answer:
    rows = d.db.execute(
        "SELECT v.name, v.contact_name, s.contract_amount"
        + SUB_JOIN
        + " WHERE s.project_code = 'GRB-111' ORDER BY s.contract_amount DESC LIMIT 2"
    ).fetchall()
    if rows[0][2] == rows[1][2]:
        raise ValueError("a tie for the largest subcontract")
    return keywords(rows[0][0], rows[0][1])


@check("fq-013")
def _(d: Data) -> Answer:
    total, unpaid = d.one(
        "SELECT SUM(i.amount), SUM(CASE WHEN i.status <> 'paid' THEN i.amount END)"
        + VENDOR_JOIN
        + " WHERE v.name = 'BrightLine Electric'"
    )
    return keywords(num(total), num(unpaid))


@check("fq-014")
def _(d: Data) -> Answer:
    names = d.col(
        "SELECT v.name" + SUB_JOIN + " WHERE s.project_code = 'GRB-108' AND v.city = 'Millbrook'"
        " ORDER BY 1"
    )
    return keywords(*map(short, names))


@check("fq-015")
def _(d: Data) -> Answer:
    rows = d.db.execute(
        "SELECT i.invoice_no, i.amount" + VENDOR_JOIN + " WHERE v.name = 'Redstone Roofing'"
        " AND i.invoice_date BETWEEN '2025-12-01' AND '2025-12-31' ORDER BY 1"
    ).fetchall()
    return [num(sum(a for _, a in rows))], [n for n, _ in rows]


@check("fq-016")
def _(d: Data) -> Answer:
    scope, amount = d.one(
        "SELECT s.scope, s.contract_amount" + SUB_JOIN + " WHERE s.project_code = 'GRB-110'"
        " AND v.name = 'Millbrook Ready-Mix'"
    )
    (kind,) = re.findall(r"^(ready-mix concrete supply)\b", scope.lower())
    return keywords(kind, num(amount))


# documents (the quotes in each question's evidence are checked as well)

DOCS = "data/documents/"


@check("fq-017")
def _(d: Data) -> Answer:
    share, hours = d.find(
        DOCS + "GRB-112/GRB-112-SPEC-001.md",
        r"Allowable loss: \*\*([\d.]+) percent of the contained volume in (\d+) hours",
    )
    return keywords(num(share), hours)


@check("fq-018")
def _(d: Data) -> Answer:
    inches, load = d.find(
        DOCS + "GRB-104/GRB-104-CTR-001.md",
        r"Apparatus bay slabs shall be (\d+) inches thick and designed for a ([\d,]+) lb",
    )
    return keywords(inches, num(load))


@check("fq-019")
def _(d: Data) -> Answer:
    return keywords(*d.find(DOCS + "GRB-108/GRB-108-SPEC-001.md", r"canopy steel: (\d+) tons"))


@check("fq-020")
def _(d: Data) -> Answer:
    return keywords(
        *d.find(DOCS + "GRB-111/GRB-111-MIN-001.md", r"freestanding at (\d+) feet hook height")
    )


@check("fq-021")
def _(d: Data) -> Answer:
    return keywords(
        *d.find(
            DOCS + "GRB-111/GRB-111-BID-002.md",
            r"U-factor ([\d.]+), solar heat gain coefficient ([\d.]+)",
        )
    )


@check("fq-022")
def _(d: Data) -> Answer:
    allowance, snow = d.find(
        DOCS + "GRB-107/GRB-107-CTR-001.md",
        r"included \$([\d,]+) for heated enclosures and ground thaw[^.]*\..*?"
        r"more than (\d+) inches in 24 hours",
    )
    return keywords(num(allowance), snow)


@check("fq-023")
def _(d: Data) -> Answer:
    (amount,) = d.find(
        DOCS + "GRB-109/GRB-109-CTR-001.md", r"kitchen equipment allowance of \$([\d,]+)"
    )
    return keywords(num(amount))


@check("fq-024")
def _(d: Data) -> Answer:
    return keywords(
        *d.find(
            DOCS + "GRB-103/GRB-103-MIN-001.md",
            r"(\d+) of \d+ balconies have passed the 24-hour flood test",
        )
    )


# sheets_dates: the answer is the set of sheet numbers (also the keywords)


def sheets(d: Data, **filters: str) -> Answer:
    found = d.sheet_numbers(**filters)
    return found, found


@check("fq-025")
def _(d: Data) -> Answer:
    return sheets(d, project="GRB-109", start="2025-01-01", end="2025-12-31")


@check("fq-026")
def _(d: Data) -> Answer:
    return sheets(d, discipline="Electrical", start="2026-07-01")


@check("fq-027")
def _(d: Data) -> Answer:
    return sheets(d, discipline="Architectural", start="2025-05-01", end="2025-08-31")


@check("fq-028")
def _(d: Data) -> Answer:
    return sheets(d, project="GRB-108", start="2025-11-01", end="2026-06-30")


@check("fq-029")
def _(d: Data) -> Answer:
    return sheets(d, project="GRB-102", start="2026-01-01", end="2026-12-31")


@check("fq-030")
def _(d: Data) -> Answer:
    return sheets(d, project="GRB-105", start="2025-06-15", end="2025-12-31")


@check("fq-031")
def _(d: Data) -> Answer:
    return sheets(d, discipline="Civil", start="2025-01-01", end="2025-12-31")


@check("fq-032")
def _(d: Data) -> Answer:
    return sheets(d, project="GRB-107", start="2026-07-01", end="2026-12-31")


# schedule_arithmetic


def late(d: Data, project: str, milestone: str) -> int:
    """Days from a milestone's planned finish to its actual finish (negative: early)."""
    m = d.milestone(project, milestone)
    return days(m["planned_finish"], m["actual_finish"])


@check("fq-033")
def _(d: Data) -> Answer:
    return keywords(late(d, "GRB-107", "Excavation complete"))


@check("fq-034")
def _(d: Data) -> Answer:
    framing = d.milestone("GRB-102", "Wall framing complete")["planned_finish"]
    dry_in = d.milestone("GRB-102", "Building dried in")["planned_finish"]
    return keywords(days(framing, dry_in))


@check("fq-035")
def _(d: Data) -> Answer:
    return keywords(late(d, "GRB-103", "Roofing complete"))


@check("fq-036")
def _(d: Data) -> Answer:
    return keywords(late(d, "GRB-108", "Utility relocation complete"))


@check("fq-037")
def _(d: Data) -> Answer:
    ntp = d.milestone("GRB-101", "Notice to proceed")["actual_finish"]
    steel = d.milestone("GRB-101", "Structural steel topped out")["actual_finish"]
    return keywords(late(d, "GRB-101", "Structural steel topped out"), days(ntp, steel))


@check("fq-038")
def _(d: Data) -> Answer:
    n = late(d, "GRB-109", "Wood framing topped out")
    return keywords("early" if n < 0 else "late", abs(n))


@check("fq-039")
def _(d: Data) -> Answer:
    return keywords(late(d, "GRB-106", "Hazardous material abatement complete"))


@check("fq-040")
def _(d: Data) -> Answer:
    m = d.milestone("GRB-103", "Balcony waterproofing complete")
    if m["actual_finish"]:
        raise ValueError("the milestone has finished")
    return keywords(days(m["planned_finish"], str(d.site["as_of"])))


# api (site.yaml and domain.yaml, as the field API serves them)


def inspection_ids(rows: list[dict[str, Any]]) -> Answer:
    ids = sorted(i["id"] for i in rows)
    return ids, ids


@check("fq-041")
def _(d: Data) -> Answer:
    return inspection_ids(d.inspections(result="scheduled"))


@check("fq-042")
def _(d: Data) -> Answer:
    (i,) = d.inspections(project="GRB-101", type="fire sprinkler rough-in level 1")
    psi, hours = re.findall(r"held (\d+) psi for (\d+) hours", i["notes"])[0]
    return keywords(psi, hours)


@check("fq-043")
def _(d: Data) -> Answer:
    s = d.site_status("GRB-107")
    return keywords(s["safety_incidents_ytd"], s["crew_count"])


@check("fq-044")
def _(d: Data) -> Answer:
    return keywords(sum(x["days_lost"] for x in d.delays() if str(x["date"]).startswith("2025-11")))


@check("fq-045")
def _(d: Data) -> Answer:
    (r,) = [r for r in d.domain["rfis"] if r["project"] == "GRB-110" and r["status"] == "open"]
    return [r["number"], str(d.rfi_days_open(r["number"]))], [r["number"]]


@check("fq-046")
def _(d: Data) -> Answer:
    (failed,) = d.inspections(project="GRB-103", result="failed")
    (retest,) = [
        i
        for i in d.inspections(project="GRB-103", result="passed")
        if f"after {failed['id']}" in i["notes"]
    ]
    return [failed["id"], retest["id"], str(retest["date"])], sorted([failed["id"], retest["id"]])


@check("fq-047")
def _(d: Data) -> Answer:
    return inspection_ids(
        [i for i in d.inspections(result="partial") if str(i["date"]).startswith("2025-12")]
    )


@check("fq-048")
def _(d: Data) -> Answer:
    return keywords(d.project("GRB-108")["superintendent"], d.site_status("GRB-108")["crew_count"])


# multi_tool


def subcontract(d: Data, project: str, vendor: str) -> str:
    (amount,) = d.one(
        "SELECT s.contract_amount" + SUB_JOIN + " WHERE s.project_code = ? AND v.name = ?",
        project,
        vendor,
    )
    return num(amount)


@check("fq-049")
def _(d: Data) -> Answer:
    phase = d.site_status("GRB-106")["phase"]
    if not phase.startswith("roof replacement"):
        raise ValueError(f"GRB-106 phase is now {phase!r}")
    return keywords(subcontract(d, "GRB-106", "Summit Mechanical LLC"), "roof replacement")


@check("fq-050")
def _(d: Data) -> Answer:
    (rate,) = d.find(
        DOCS + "GRB-110/GRB-110-CTR-001.md", r"Liquidated damages: \*\*\$([\d,]+) per calendar"
    )
    return keywords(num(rate), sum(x["days_lost"] for x in d.delays("GRB-110")))


@check("fq-051")
def _(d: Data) -> Answer:
    (bid,) = d.find(
        DOCS + "GRB-108/GRB-108-PRP-001.md", r"\| 14 \| Canopy photovoltaic array[^|]*\| \$([\d,]+)"
    )
    return keywords(num(bid), subcontract(d, "GRB-108", "BrightLine Electric"))


@check("fq-052")
def _(d: Data) -> Answer:
    (total,) = d.one(
        "SELECT SUM(amount) FROM change_orders WHERE project_code = 'GRB-106'"
        " AND status = 'approved'"
    )
    (clearance,) = d.inspections(project="GRB-106", inspector="Oregon DEQ")
    return keywords(num(total), clearance["result"])


@check("fq-053")
def _(d: Data) -> Answer:
    return keywords(
        subcontract(d, "GRB-112", "Northfork Concrete Co."),
        d.site_status("GRB-112")["crew_count"],
        d.milestone("GRB-112", "Blower building foundations complete")["planned_finish"],
    )


@check("fq-054")
def _(d: Data) -> Answer:
    return keywords(
        sum(x["days_lost"] for x in d.delays("GRB-108")),
        d.milestone("GRB-108", "Terminal building dried in")["planned_finish"],
        subcontract(d, "GRB-108", "Evergreen Earthworks"),
    )


@check("fq-055")
def _(d: Data) -> Answer:
    (allowed,) = d.find(
        DOCS + "GRB-108/GRB-108-PRP-001.md", r"(\d+) calendar days, from a September 8, 2025"
    )
    finish = d.milestone("GRB-108", "Substantial completion")["planned_finish"]
    return keywords(allowed, days(str(d.site["as_of"]), finish))


@check("fq-056")
def _(d: Data) -> Answer:
    (total,) = d.one(
        "SELECT SUM(i.amount)" + VENDOR_JOIN + " WHERE i.project_code = 'GRB-109'"
        " AND v.name = 'Keystone Drywall & Framing' AND i.status = 'approved'"
    )
    return keywords(num(total), d.milestone("GRB-109", "Drywall complete")["planned_finish"])


@check("fq-057")
def _(d: Data) -> Answer:
    (curing,) = d.find(
        DOCS + "GRB-110/GRB-110-SPEC-001.md",
        r"Shotcrete curing: keep continuously moist for \*\*(\d+) days",
    )
    return keywords(
        curing,
        d.milestone("GRB-110", "Pool shell concrete placed")["planned_finish"],
        subcontract(d, "GRB-110", "Northfork Concrete Co."),
    )


# no_tool: nothing to compute
for _n in range(58, 71):
    CHECKS[f"fq-{_n:03d}"] = lambda d: ([], [])


# --------------------------------------------------------------------------------------------


def read_set(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8-sig").splitlines() if x.strip()]


def split(questions: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(fresh ids, unseen ids): per kind, the quarter of ids with the lowest sha256 is unseen."""
    by_kind: dict[str, list[str]] = {}
    for q in questions:
        by_kind.setdefault(q["kind"], []).append(q["id"])
    unseen: set[str] = set()
    for ids in by_kind.values():
        ranked = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
        unseen.update(ranked[: max(1, (len(ids) + 2) // 4)])
    return {q["id"] for q in questions} - unseen, unseen


def _normalize(text: str) -> str:
    """Lowercase, single spaces, no currency signs or thousands separators ($60,000 -> 60000)."""
    text = re.sub(r"\s+", " ", text.lower().replace("$", ""))
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)


def in_text(keyword: str, text: str) -> bool:
    """The keyword appears in the text: numbers compare as numbers (0.05 == 0.050)."""
    key, got = _normalize(keyword).strip(), _normalize(text)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", key):
        numbers = re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)", got)
        return any(Decimal(n) == Decimal(key) for n in numbers)
    return key in got


def _evidence(q: dict[str, Any], repo: Path) -> list[tuple[str, str]]:
    """(message, detail) for each problem with the question's evidence quotes."""
    problems = []
    items = q.get("evidence") or []
    items = [items] if isinstance(items, dict) else items
    if q["kind"] == "documents" and not items:
        return [("no evidence quote", "")]
    for e in items:
        path = repo / e["file"]
        if not path.is_file():
            problems.append(("an evidence file is missing", f": {e['file']}"))
        elif e["quote"] not in path.read_text(encoding="utf-8-sig"):
            problems.append(("an evidence quote is not in its file verbatim", f": {e['file']}"))
    if q["kind"] == "documents":
        quotes = " | ".join(e["quote"] for e in items)
        missing = [k for k in q.get("answer_keywords", []) if not in_text(k, quotes)]
        if missing:
            problems.append(("keywords missing from the evidence quote", f": {missing}"))
    return problems


def _shape(q: dict[str, Any]) -> list[str]:
    problems = []
    tools = q.get("expected_tools", [])
    if q.get("kind") not in MIN_KINDS:
        problems.append(f"unknown kind {q.get('kind')!r}")
    if not set(tools) <= READ_TOOLS:
        problems.append(f"tools outside the read tools: {sorted(set(tools) - READ_TOOLS)}")
    if len(set(tools)) != len(tools):
        problems.append("a tool listed twice")
    if q.get("kind") == "no_tool":
        if tools or q.get("answer_keywords") or q.get("answer_ids"):
            problems.append("a no_tool question lists tools, keywords or ids")
    elif not tools or not q.get("answer_keywords"):
        problems.append("no expected_tools or no answer_keywords")
    if q.get("kind") == "multi_tool" and len(tools) < 2:
        problems.append("a multi_tool question with fewer than two tools")
    if q.get("kind") != "multi_tool" and len(tools) > 1:
        problems.append("several tools on a question that is not multi_tool")
    return problems


def _question_problems(q: dict[str, Any], data: Data, repo: Path) -> list[tuple[str, str]]:
    """(message, detail) for each problem with one question; detail shows the values."""
    problems = [(p, "") for p in _shape(q)] + _evidence(q, repo)
    fn = CHECKS.get(q["id"])
    if fn is None:
        return [*problems, ("no check in scripts/verify_questions.py", "")]
    try:
        want_keywords, want_ids = fn(data)
    except Exception as exc:
        return [*problems, ("the check failed", f": {exc.__class__.__name__}: {exc}")]
    have_keywords, have_ids = q.get("answer_keywords", []), q.get("answer_ids", [])
    if Counter(have_keywords) != Counter(want_keywords):
        problems.append(
            ("answer_keywords differ from the data", f": {have_keywords} != {want_keywords}")
        )
    if Counter(have_ids) != Counter(want_ids):
        problems.append(("answer_ids differ from the data", f": {have_ids} != {want_ids}"))
    return problems


def verify(data_dir: Path) -> list[str]:
    """Every problem with the fresh and unseen question sets; [] when they agree with the data."""
    data_dir = Path(data_dir)
    repo = data_dir.parent
    qdir = data_dir / "questions"
    data = Data(data_dir)
    problems: list[str] = []
    questions: list[dict[str, Any]] = []
    where: dict[str, str] = {}
    for name in FILES:
        path = qdir / name
        if not path.is_file():
            problems.append(f"{name} is missing")
            continue
        for q in read_set(path):
            if q["id"] in where:
                problems.append(f"{q['id']}: in {where[q['id']]} and {name}")
            where[q["id"]] = name
            questions.append(q)
    for q in questions:
        name = where[q["id"]]
        for message, detail in _question_problems(q, data, repo):
            # a held-out question's problems are named, never shown with their values
            problems.append(f"{q['id']} ({name}): {message}" + ("" if name == HELD_OUT else detail))
    ids = {q["id"] for q in questions}
    for qid in sorted(set(CHECKS) - ids):
        problems.append(f"{qid}: a check without a question")
    if all(q.get("kind") in MIN_KINDS for q in questions):
        _, unseen = split(questions)
        for qid in sorted(ids):
            want = HELD_OUT if qid in unseen else FILES[0]
            if where[qid] != want:
                problems.append(f"{qid}: belongs in {want} by the sha256 split")
        counts = Counter(q["kind"] for q in questions)
        for kind, least in MIN_KINDS.items():
            if counts[kind] < least:
                problems.append(f"{counts[kind]} {kind} questions, fewer than {least}")
        three = sum(
            1 for q in questions if q["kind"] == "multi_tool" and len(q["expected_tools"]) >= 3
        )
        if three < MIN_THREE_TOOL:
            problems.append(f"{three} multi_tool questions need three tools, fewer than 2")
    return problems


def main() -> int:
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "data"
    problems = verify(data_dir)
    for p in problems:
        print(p)
    counts: dict[str, Counter[str]] = {}
    for name in FILES:
        path = data_dir / "questions" / name
        if path.is_file():
            counts[name] = Counter(q["kind"] for q in read_set(path))
    for name, c in counts.items():
        print(
            f"{name}: {sum(c.values())} questions, " + ", ".join(f"{k} {c[k]}" for k in MIN_KINDS)
        )
    print(f"{len(problems)} problem(s)" if problems else "all questions agree with the data")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
