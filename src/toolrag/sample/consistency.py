"""Cross-source consistency of the sample domain: every fact agrees with its source of record.

The sample states the same facts in several places: ``domain.yaml`` (projects, vendors, change
orders, RFIs), the SQL seed script (``db/seed.sql``), the field API's data (``api/site.yaml``),
the milestone schedules (``schedules/*.csv``), the sheet register (``blueprints/sheets.yaml``),
the documents (``documents/<project>/*.md``), the question files (``questions/*.jsonl``) and the
tool cards and OpenAPI document (``toolspecs/``). :func:`check_sample` loads them all and checks
them against each other by rule; the rules read the data and know no answer of the sample.

Rules (``Finding.rule``):

- ``project_identity``: a project's code, name, client, architect, terms and dates agree across
  domain.yaml, the database, the API data, the schedules, the sheet register and the documents;
  vendors, change orders and RFIs agree between domain.yaml and the database.
- ``unknown_reference``: every id (project, document, RFI, change order, inspection, invoice,
  subcontract, vendor, milestone, cost code, sheet) named anywhere exists in its source of
  record. A document may cite sheets outside the register (it holds a part of each drawing set),
  but not a number one digit away from a registered sheet of its project (M-202 beside M-201).
- ``status_mismatch``: an item's status agrees wherever it is stated: its own document, a
  sentence naming it ("remains open", "was approved"), a sheet note ("PER ..." cites an answered
  RFI or approved change order, "PENDING ..." an open or pending one), a card example (only
  scheduled inspections are cancelled, only pending change orders submitted, an RFI is marked
  answered only while open and reopened only when it is not open).
- ``date_mismatch`` / ``amount_mismatch``: the first date or dollar amount of a sentence after
  an item's id is the item's date (an RFI's answer date after "answered") or amount (for a change
  order also the contract sum it makes).
- ``after_data_date``: nothing is dated after the data date (``as_of`` of ``api/site.yaml``)
  except planned dates: schedule plans, scheduled inspections (which must lie after it), invoice
  due dates and the sheet register's revisions (later ones are planned issues).
- ``invoice_over_subcontract``: a vendor's invoices on a project do not exceed its subcontracts
  there plus its share of the approved change orders (the change-order document's cost lines
  naming the vendor); an invoice is due 30 days after its date and its number names its vendor.
- ``budget_trade``: every subcontract and every vendor bid has a budget line for its trade on its
  project; a bid, and a proposal line naming a vendor and an amount, match the vendor's
  subcontract on the project where it has one.
- ``schedule_status``: a milestone's status agrees with its dates on the data date.
- ``project_status``: a project's status follows its schedule (preconstruction: no work started;
  closeout: substantial completion reached, not final completion; complete: everything done).
- ``site_phase``: the site status agrees with the schedule on the data date: no crew (crew 0 or a
  preconstruction phase) only while no work has started, and no phase word names only finished
  milestones.
- ``sheet_after_work``: a structural sheet is not revised after the planned finish of the work
  it serves (the milestones sharing most words with its title).
- ``sheet_register``: one PNG per register entry, named after its project and sheet number,
  dated within the project (a sheet before the start must say it is not for construction).
- ``substantial_completion``: the database, domain.yaml's ``substantial_completion``, the
  contract and the schedule's substantial completion milestone keep the original contract date;
  ``revised_substantial_completion`` in domain.yaml is that date plus the days added by approved
  change orders; an approved change order adding days states the revised date, and a document
  giving "the contract date" or a revised date gives the revised date as of its own date.
- ``question_sql``, ``question_source``, ``question_sheets``, ``question_schedule``,
  ``question_api``: a question agrees with the data: its expected SQL returns its answer keywords
  (as a cell, a column total or the row count), the numbers of a document answer are in its
  source document, a blueprint answer lists the register's sheets of its window with their
  revisions and dates, a schedule answer's dates and statuses are the schedule's, an API answer's
  keywords are in the record the call returns.

Regular expressions are linear (no nested quantifiers). Held-out question files
(``HELD_OUT_QUESTIONS``) are never read.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

__all__ = ["HELD_OUT_QUESTIONS", "Finding", "check_sample"]

HELD_OUT_QUESTIONS = frozenset({"unseen.jsonl"})  # nobody reads them, this check included
NET_DAYS = 30  # invoice terms (the invoices table: net 30)
NEAR = 60  # characters after "revised substantial completion" where its date stands

MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
DATE_RE = re.compile(
    r"\b(?:(\d{4})-(\d{2})-(\d{2})|(" + "|".join(MONTHS) + r") (\d{1,2}), (\d{4}))\b"
)
AMOUNT_RE = re.compile(r"(-?)\$(\d[\d,]*)")
NUMBER_RE = re.compile(r"\d[\d,]*(?:\.\d+)?")
# Every id shape of the sample, longest first; a sheet number is one or two capitals, a hyphen
# and three digits. None continues into more of an id.
ID_RE = re.compile(
    r"\b(?:"
    r"(?P<doc>GRB-\d{3}-[A-Z]{2,4}-\d{3})|(?P<project>GRB-\d{3})|(?P<rfi>RFI-\d{3}-\d{3})"
    r"|(?P<co>CO-\d{3}-\d{2})|(?P<insp>INSP-\d{3}-\d{2})|(?P<inv>INV-V\d{2}-\d{4}-\d{4})"
    r"|(?P<sc>SC-\d{3}-\d{2})|(?P<milestone>M-\d{3}-\d{2})|(?P<vendor>V\d{2})"
    r"|(?P<cost>\d{2}-\d{4})|(?P<sheet>[A-Z]{1,2}-\d{3})"
    r")(?![\w-])"
)
RANGE_END_RE = re.compile(r"\b(?:to|through)\s*$")  # "S-301 to S-306": S-306 ends a range
SENTENCE_END_RE = re.compile(r"[.;|?\n]")
RFI_STATUS_RE = re.compile(r"\b(open|answered|closed)\b", re.I)
CO_STATUS_RE = re.compile(r"\b(approved|pending|rejected)\b", re.I)
INSP_RESULT_RE = re.compile(r"\b(passed|failed|partial|scheduled|cancelled)\b", re.I)
OWN_STATUS_RE = re.compile(
    r"status\b[^A-Za-z\n]{0,8}(open|answered|closed|approved|pending|rejected)", re.I
)
NOTE_REF_RE = re.compile(r"\b(PER|PENDING)\s+((?:RFI|CO)-\d{3}-\d{2,3})\b")
DAYS_RE = re.compile(r"\b(\d+) (?:added )?(?:calendar )?days?\b")
BID_TOTAL_RE = re.compile(r"bid[^$\n]{0,30}\$(\d[\d,]*)", re.I)
SC_PHRASE_RE = re.compile(r"substantial completion", re.I)
REVISED_RE = re.compile(r"revised (?:contract date|substantial completion)", re.I)
CONTRACT_DATE_RE = re.compile(r"(?<!revised )contract date of", re.I)
WORD_RE = re.compile(r"[a-z][a-z-]*")
ANSWER_STATUS = {
    "is late": "late",
    "is in progress": "in_progress",
    "is not started": "not_started",
}
MILESTONE_STATUSES = {"complete", "in_progress", "late", "not_started"}
API_TOOLS = ("get_site_status", "list_inspections", "list_weather_delays", "get_rfi_status")
STOP = frozenset(
    {
        "a", "an", "and", "at", "by", "for", "from", "in", "no", "of", "on", "or", "per", "the",
        "to", "with", "plan", "plans", "detail", "details", "elevation", "reinforcing",
        "framing", "typical", "level", "complete", "completed", "installed", "erected",
    }
)  # fmt: skip


class Finding(BaseModel):
    """One disagreement: the rule it breaks, where (a path under the data folder, with a record
    or a question id after a colon), and what disagrees."""

    rule: str
    where: str
    detail: str


# ---- small helpers -------------------------------------------------------------------------

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_YAML_LOADER)


def _date(value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        return None


def _dates(text: str) -> list[dt.date]:
    """The dates written in ``text`` (2025-12-15 or December 15, 2025), in order."""
    found = []
    for m in DATE_RE.finditer(text):
        try:
            if m.group(1):
                found.append(dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            else:
                month = MONTHS.index(m.group(4)) + 1
                found.append(dt.date(int(m.group(6)), month, int(m.group(5))))
        except ValueError:
            continue
    return found


def _money(amount: float) -> str:
    """$186,400 / -$22,400, as the documents write amounts."""
    return f"{'-' if amount < 0 else ''}${abs(round(amount)):,}"


def _amounts(text: str) -> list[float]:
    return [
        float(m.group(2).replace(",", "")) * (-1 if m.group(1) else 1)
        for m in AMOUNT_RE.finditer(text)
    ]


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER_RE.findall(text)}


def _norm(text: str) -> str:
    return text.casefold().replace(",", "").replace("$", "")


def _value(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _words(text: str) -> set[str]:
    """Content words, singular (foundations -> foundation)."""
    out = set()
    for w in WORD_RE.findall(text.casefold()):
        if w in STOP or len(w) < 3:
            continue
        out.add(w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w)
    return out


def _window(text: str, start: int) -> str:
    """The rest of the clause after ``start``: up to the end of the sentence, the next id or a
    parenthesis closing around the id ("(CO-101-02, CO-110-01), net $270,250"). Empty for a
    question ("Has RFI-107-031 been answered?"): it states nothing."""
    end = SENTENCE_END_RE.search(text, start)
    if end and end.group(0) == "?":
        return ""
    part = text[start : end.start() if end else len(text)]
    nxt = ID_RE.search(part)
    if nxt:
        part = part[: nxt.start()]
    depth = 0
    for n, ch in enumerate(part):
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return part[:n]
            depth -= 1
    return part


def _near(text: str, start: int) -> str:
    """The next few words of the line after ``start`` (a table cell or two included)."""
    line_end = text.find("\n", start)
    return text[start : min(start + NEAR, line_end if line_end >= 0 else len(text))]


def _ids(text: str) -> Iterator[tuple[str, str, int, int]]:
    """(kind, id, start, end) of every id in ``text``."""
    for m in ID_RE.finditer(text):
        yield m.lastgroup or "", m.group(0), m.start(), m.end()


def _first_id(text: str, kind: str) -> str | None:
    return next((ident for k, ident, _a, _b in _ids(text) if k == kind), None)


# ---- the loaded sample ---------------------------------------------------------------------


class _Doc(BaseModel):
    path: str
    meta: dict[str, Any]
    body: str

    @property
    def date(self) -> dt.date | None:
        return _date(self.meta.get("date"))

    @property
    def project(self) -> str:
        return str(self.meta.get("project", ""))

    @property
    def kind(self) -> str:
        return str(self.meta.get("document_type", ""))

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))


class _Question(BaseModel):
    where: str
    item: dict[str, Any]

    @property
    def answer(self) -> str:
        return str(self.item.get("expected_answer", ""))

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.item.get("expected_args") or {})

    @property
    def sql(self) -> str | None:
        sql = self.item.get("expected_sql") or self.args.get("sql")
        return str(sql) if sql else None

    def text(self) -> str:
        """Every text of the question but its SQL: query, answer, keywords, ids, arguments."""
        parts: list[str] = []
        for key, value in self.item.items():
            if key in ("id", "expected_sql", "expected_tools"):
                continue
            if isinstance(value, dict):
                parts += [str(v) for k, v in value.items() if k != "sql"]
            elif isinstance(value, list):
                parts += [str(v) for v in value]
            else:
                parts.append(str(value))
        return "\n".join(parts)

    def project(self, projects: dict[str, dict[str, Any]]) -> str | None:
        """The project the question is about: its arguments', else the one its query names."""
        wanted = str(self.args.get("project", "")).casefold()
        for code, p in projects.items():
            if wanted and wanted in (code.casefold(), str(p["name"]).casefold()):
                return code
        query = str(self.item.get("query", ""))
        named = [c for c, p in projects.items() if c in query or str(p["name"]) in query]
        return named[0] if len(named) == 1 else None


class _Sample:
    """Every source under the data folder, loaded once; rules add their findings to it."""

    def __init__(self, data_dir: Path, toolspecs_dir: Path | None) -> None:
        self.data_dir = data_dir
        self.findings: list[Finding] = []
        self.domain: dict[str, Any] = self._yaml("domain.yaml") or {}
        self.site: dict[str, Any] = self._yaml("api/site.yaml") or {}
        self.as_of = _date(self.site.get("as_of")) or dt.date.today()
        self.projects = {str(p["code"]): p for p in self.domain.get("projects", [])}
        self.vendors = {str(v["id"]): v for v in self.domain.get("vendors", [])}
        self.cos = {str(c["number"]): c for c in self.domain.get("change_orders", [])}
        self.rfis = {str(r["number"]): r for r in self.domain.get("rfis", [])}
        self.inspections = {str(i["id"]): i for i in self.site.get("inspections", [])}
        self.db = self._database()
        self.schedules = self._schedules()
        self.sheets: list[dict[str, Any]] = self._yaml("blueprints/sheets.yaml") or []
        self.docs = self._documents()
        self.questions = self._questions()
        self.specs: dict[str, str] = {}
        self.cards: list[tuple[str, dict[str, Any]]] = []
        specs = toolspecs_dir if toolspecs_dir is not None else data_dir.parent / "toolspecs"
        if specs.is_dir():
            self._toolspecs(specs)
        self._known: dict[str, set[str]] = {}

    def add(self, rule: str, where: str, detail: str) -> None:
        self.findings.append(Finding(rule=rule, where=where, detail=detail))

    # loading

    def _yaml(self, rel: str) -> Any:
        path = self.data_dir / rel
        if not path.is_file():
            self.add("project_identity", rel, "the file is missing")
            return None
        return _load_yaml(path.read_text(encoding="utf-8-sig"))

    def _database(self) -> sqlite3.Connection:
        """The seed script run into an in-memory SQLite database, foreign keys checked."""
        conn = sqlite3.connect(":memory:")
        conn.row_factory = sqlite3.Row
        seed = self.data_dir / "db" / "seed.sql"
        if not seed.is_file():
            self.add("project_identity", "db/seed.sql", "the file is missing")
            return conn
        conn.execute("PRAGMA foreign_keys = ON")
        try:
            conn.executescript(seed.read_text(encoding="utf-8-sig"))
        except sqlite3.Error as exc:
            self.add("project_identity", "db/seed.sql", f"the script does not run: {exc}")
            return conn
        for table, rowid, parent, _fk in conn.execute("PRAGMA foreign_key_check").fetchall():
            self.add("unknown_reference", f"db/seed.sql:{table}", f"row {rowid}: no {parent}")
        conn.execute("PRAGMA query_only = ON")  # the questions' SQL runs on it too
        return conn

    def _schedules(self) -> dict[str, list[dict[str, str]]]:
        out: dict[str, list[dict[str, str]]] = {}
        for path in sorted((self.data_dir / "schedules").glob("*.csv")):
            with path.open(encoding="utf-8-sig", newline="") as fh:
                out[path.stem] = list(csv.DictReader(fh))
        return out

    def _documents(self) -> list[_Doc]:
        docs = []
        for path in sorted((self.data_dir / "documents").rglob("*.md")):
            text = path.read_text(encoding="utf-8-sig")
            meta: dict[str, Any] = {}
            body = text
            end = text.find("\n---", 4) if text.startswith("---\n") else -1
            if end > 0:
                meta = _load_yaml(text[4:end]) or {}
                body = text[end + 4 :]
            docs.append(_Doc(path=path.relative_to(self.data_dir).as_posix(), meta=meta, body=body))
        return docs

    def _questions(self) -> list[_Question]:
        out = []
        for path in sorted((self.data_dir / "questions").glob("*.jsonl")):
            if path.name in HELD_OUT_QUESTIONS:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
                if line.strip():
                    item = json.loads(line)
                    where = f"questions/{path.name}:{item.get('id', f'line {n}')}"
                    out.append(_Question(where=where, item=item))
        return out

    def _toolspecs(self, folder: Path) -> None:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
                continue
            rel = f"toolspecs/{path.relative_to(folder).as_posix()}"
            self.specs[rel] = path.read_text(encoding="utf-8-sig")
            if path.parent.name == "cards" and path.suffix != ".json":
                entries = _load_yaml(self.specs[rel]) or []
                self.cards += [(rel, e) for e in entries if isinstance(e, dict)]

    # derived facts

    def rows(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        try:
            return list(self.db.execute(sql, params))
        except sqlite3.Error:
            return []

    def milestones(self, code: str) -> list[dict[str, str]]:
        return self.schedules.get(code, [])

    def milestone(self, code: str, name: str) -> dict[str, str] | None:
        return next((m for m in self.milestones(code) if m["milestone"].casefold() == name), None)

    def approved_days(self, code: str, as_of: dt.date) -> int:
        return sum(
            int(c.get("days_added") or 0)
            for c in self.cos.values()
            if c["project"] == code
            and c["status"] == "approved"
            and (_date(c["date"]) or as_of) <= as_of
        )

    def original_completion(self, code: str) -> dt.date | None:
        return _date(self.projects.get(code, {}).get("substantial_completion"))

    def revised_completion(self, code: str, as_of: dt.date) -> dt.date | None:
        original = self.original_completion(code)
        days = self.approved_days(code, as_of)
        return original + dt.timedelta(days=days) if original else None

    def contract_sum_after(self, number: str) -> float | None:
        """The contract sum with the approved change order ``number`` and those before it, as
        documents state it ("revised contract sum after CO-106-01: $5,028,750")."""
        c = self.cos.get(number)
        if c is None or c["status"] != "approved" or c["project"] not in self.projects:
            return None
        key = (str(c["date"]), number)
        added = sum(
            float(x["amount"])
            for x in self.cos.values()
            if x["project"] == c["project"]
            and x["status"] == "approved"
            and (str(x["date"]), x["number"]) <= key
        )
        return float(self.projects[c["project"]]["contract_value"]) + added

    def sheet_ids(self, code: str | None = None) -> set[str]:
        return {str(x["sheet_number"]) for x in self.sheets if code in (None, x.get("project"))}

    def known(self, kind: str) -> set[str]:
        """The ids of one kind that exist in their source of record."""
        if kind not in self._known:
            self._known[kind] = self._source_ids(kind)
        return self._known[kind]

    def _source_ids(self, kind: str) -> set[str]:
        tables = {
            "inv": "SELECT invoice_no FROM invoices",
            "sc": "SELECT subcontract_id FROM subcontracts",
            "cost": "SELECT DISTINCT cost_code FROM budgets",
        }
        if kind in tables:
            return {r[0] for r in self.rows(tables[kind])}
        records = {
            "project": self.projects,
            "rfi": self.rfis,
            "co": self.cos,
            "insp": self.inspections,
            "vendor": self.vendors,
        }
        if kind in records:
            return set(records[kind])
        if kind == "doc":
            return {str(d.meta.get("id")) for d in self.docs}
        if kind == "milestone":
            return {m["milestone_id"] for ms in self.schedules.values() for m in ms}
        return self.sheet_ids()


# ---- rules ---------------------------------------------------------------------------------

PROJECT_COLUMNS = {
    "name": "name", "client": "client", "architect": "architect", "location": "location",
    "type": "project_type", "contract_type": "contract_type", "contract_value": "contract_value",
    "start": "start_date", "substantial_completion": "substantial_completion",
    "project_manager": "project_manager", "superintendent": "superintendent", "status": "status",
}  # fmt: skip
CO_COLUMNS = {
    "project": "project_code", "title": "title", "amount": "amount", "days_added": "days_added",
    "date": "co_date",
}  # fmt: skip
RFI_COLUMNS = {
    "project": "project_code", "subject": "subject", "asked_by": "asked_by",
    "to": "addressed_to", "date": "asked_date", "answer_date": "answer_date",
}  # fmt: skip


def _same(a: Any, b: Any) -> bool:
    """Equal as numbers, as dates or as text (None and NULL alike)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, int | float) and not isinstance(a, bool):
        try:
            return float(a) == float(b)
        except ValueError:
            return False
    if isinstance(a, dt.date):
        return a == _date(b)
    return str(a) == str(b)


def _project_identity(s: _Sample) -> None:
    _database_agrees(s)
    site_codes = sorted(str(x["project"]) for x in s.site.get("site_status", []))
    if site_codes != sorted(s.projects):
        s.add("project_identity", "api/site.yaml:site_status", f"not one per project: {site_codes}")
    for key in ("inspections", "weather_delays"):
        for x in s.site.get(key, []):
            code, day = str(x["project"]), _date(x["date"])
            start = _date(s.projects.get(code, {}).get("start"))
            if code not in s.projects:
                s.add("unknown_reference", f"api/site.yaml:{key}", f"unknown project {code}")
            elif start and day and day < start:
                what = x.get("id", code)
                s.add("project_identity", f"api/site.yaml:{key}", f"{what} {day} is before {start}")
    for code in sorted(set(s.schedules) | set(s.projects)):
        where = f"schedules/{code}.csv"
        ms = s.schedules.get(code)
        if code not in s.projects or ms is None:
            s.add("project_identity", where, f"{code}: the schedules and projects differ")
            continue
        for m in ms:
            if m["project"] != code or not m["milestone_id"].startswith(f"M-{code[4:]}-"):
                s.add("project_identity", where, f"{m['milestone_id']} filed under {m['project']}")
        start = _date(s.projects[code]["start"])
        if ms and _date(ms[0]["planned_start"]) != start:
            s.add("project_identity", where, f"starts {ms[0]['planned_start']}, project {start}")
    for sheet in s.sheets:
        p = s.projects.get(str(sheet.get("project")))
        where = f"blueprints/sheets.yaml:{sheet.get('file')}"
        if p is None:
            s.add("unknown_reference", where, f"unknown project {sheet.get('project')}")
        elif sheet.get("project_name") != p["name"] or sheet.get("drawn_by") != p["architect"]:
            s.add("project_identity", where, f"not {p['name']} by {p['architect']}")
    for d in s.docs:
        p = s.projects.get(d.project)
        doc_id = str(d.meta.get("id", ""))
        if p is None or not d.path.startswith(f"documents/{d.project}/"):
            s.add("project_identity", d.path, f"filed under an unknown project {d.project!r}")
            continue
        if Path(d.path).stem != doc_id or not doc_id.startswith(f"{d.project}-"):
            s.add("project_identity", d.path, f"id {doc_id!r} differs from its file or project")
        if d.kind == "contract":
            for fact in (_money(float(p["contract_value"])), str(p["client"])):
                if fact not in d.body:
                    s.add("project_identity", d.path, f"the contract does not state {fact}")
            if _date(p["start"]) not in _dates(d.body):
                s.add("project_identity", d.path, f"the contract does not start {p['start']}")


def _database_agrees(s: _Sample) -> None:
    """Projects, vendors, change orders and RFIs: domain.yaml and the database hold the same."""
    db = {r["code"]: r for r in s.rows("SELECT * FROM projects")}
    for code in sorted(set(db) | set(s.projects)):
        p, row = s.projects.get(code), db.get(code)
        if p is None or row is None:
            s.add("project_identity", "db/seed.sql:projects", f"{code} is in one source only")
            continue
        for key, col in PROJECT_COLUMNS.items():
            if not _same(p.get(key), row[col]):
                s.add(
                    "project_identity",
                    "db/seed.sql:projects",
                    f"{code} {key}: domain.yaml {p.get(key)!r}, database {row[col]!r}",
                )
    vendors = {r["vendor_id"]: (r["name"], r["trade"]) for r in s.rows("SELECT * FROM vendors")}
    if vendors != {k: (v["name"], v["trade"]) for k, v in s.vendors.items()}:
        s.add("project_identity", "db/seed.sql:vendors", "the vendors differ from domain.yaml")
    for table, key, records, columns in (
        ("change_orders", "co_number", s.cos, CO_COLUMNS),
        ("rfis", "rfi_number", s.rfis, RFI_COLUMNS),
    ):
        rows = {r[key]: r for r in s.rows(f"SELECT * FROM {table}")}
        for number in sorted(set(rows) | set(records)):
            record, row = records.get(number), rows.get(number)
            where = f"db/seed.sql:{table}"
            if record is None or row is None:
                s.add("unknown_reference", where, f"{number} is in one of domain.yaml and the db")
                continue
            for field, col in columns.items():
                if not _same(record.get(field), row[col]):
                    detail = f"domain.yaml {record.get(field)!r}, database {row[col]!r}"
                    s.add("project_identity", where, f"{number} {field}: {detail}")
            if record["status"] != row["status"]:
                detail = f"domain.yaml {record['status']}, database {row['status']}"
                s.add("status_mismatch", where, f"{number}: {detail}")
    for number, r in s.rfis.items():
        if (r["status"] == "open") != (r.get("answer_date") is None):
            detail = f"{number} is {r['status']} with answer date {r.get('answer_date')}"
            s.add("status_mismatch", "domain.yaml:rfis", detail)


def _references(s: _Sample) -> None:
    def scan(where: str, text: str, code: str | None, cited: bool) -> None:
        """``cited``: sheets are cited as a document cites them (the register holds a part of
        each drawing set); otherwise every sheet named must be in the register."""
        for kind, ident, start, _end in _ids(text):
            if kind == "sheet" and RANGE_END_RE.search(text[max(0, start - 10) : start]):
                continue
            if kind == "sheet" and cited:
                registered = s.sheet_ids(code)
                near = sorted(x for x in registered if x != ident and x[:-1] == ident[:-1])
                if code and near and ident not in registered:
                    detail = f"sheet {ident} is not in the register ({', '.join(near)} is)"
                    s.add("unknown_reference", where, detail)
                continue
            if ident not in (s.sheet_ids(code) if kind == "sheet" and code else s.known(kind)):
                scope = f" of {code}" if kind == "sheet" and code else ""
                s.add("unknown_reference", where, f"{ident} ({kind}{scope}) does not exist")

    for d in s.docs:
        scan(d.path, f"{d.title}\n{d.body}", d.project, cited=True)
    for sheet in s.sheets:
        notes = " ".join(sheet.get("notes") or [])
        scan(f"blueprints/sheets.yaml:{sheet.get('file')}", notes, str(sheet.get("project")), False)
    for x in s.site.get("inspections", []):
        where, notes = f"api/site.yaml:{x['id']}", str(x.get("notes", ""))
        scan(where, notes, str(x["project"]), cited=False)
        for kind, ident, _a, _b in _ids(notes):
            earlier = s.inspections.get(ident) if kind == "insp" else None
            if earlier and str(earlier["date"]) >= str(x["date"]):
                s.add("date_mismatch", where, f"{ident} is not earlier than {x['id']}")
    for x in s.site.get("site_status", []):
        where = f"api/site.yaml:site_status:{x['project']}"
        scan(where, str(x.get("phase", "")), str(x["project"]), cited=False)
    for rel, text in s.specs.items():
        scan(rel, text, None, cited=False)
    for q in s.questions:
        blueprint = q.item.get("expected_tools") == ["search_blueprints"]
        scan(q.where, q.text(), q.project(s.projects), cited=not blueprint)
        if q.sql:
            scan(q.where, q.sql, None, cited=False)


def _stated(s: _Sample, where: str, text: str) -> None:
    """Statuses, dates and amounts stated in the sentence after each item's id."""
    for kind, ident, _start, end in _ids(text):
        win = _window(text, end)
        if not win.strip():
            continue
        day = next(iter(_dates(win)), None)
        amounts = _amounts(win)
        if kind == "rfi" and ident in s.rfis:
            r = s.rfis[ident]
            m = RFI_STATUS_RE.search(win)
            said = m.group(1).lower() if m else None
            if said and said != r["status"]:
                s.add("status_mismatch", where, f"{ident} is said {said}; it is {r['status']}")
            if day:
                first = DATE_RE.search(win)
                answered = bool(said == "answered" and m and first and m.start() < first.start())
                want = _date(r.get("answer_date")) if answered else _date(r["date"])
                if day != want:
                    what = "answered" if answered else "dated"
                    s.add("date_mismatch", where, f"{ident} {day} here; it was {what} {want}")
        elif kind == "co" and ident in s.cos:
            c = s.cos[ident]
            m = CO_STATUS_RE.search(win)
            if m and m.group(1).lower() != c["status"]:
                detail = f"{ident} is said {m.group(1).lower()}; it is {c['status']}"
                s.add("status_mismatch", where, detail)
            if day and day != _date(c["date"]):
                s.add("date_mismatch", where, f"{ident} dated {day} here; it is {c['date']}")
            if amounts and amounts[0] not in (float(c["amount"]), s.contract_sum_after(ident)):
                detail = f"{ident} {_money(amounts[0])} here; it is {_money(float(c['amount']))}"
                s.add("amount_mismatch", where, detail)
            days = DAYS_RE.search(win)
            if days and int(days.group(1)) != int(c["days_added"]):
                detail = f"{ident} adds {days.group(1)} days here, {c['days_added']} in fact"
                s.add("amount_mismatch", where, detail)
        elif kind == "insp" and ident in s.inspections:
            i = s.inspections[ident]
            m = INSP_RESULT_RE.search(win)
            if m and m.group(1).lower() != i["result"]:
                detail = f"{ident} is said {m.group(1).lower()}; it is {i['result']}"
                s.add("status_mismatch", where, detail)
            if day and day != _date(i["date"]):
                s.add("date_mismatch", where, f"{ident} dated {day} here; it is {i['date']}")
        elif kind == "inv" and amounts:
            row = s.rows("SELECT amount FROM invoices WHERE invoice_no = ?", ident)
            if row and amounts[0] != float(row[0]["amount"]):
                detail = f"{ident} {_money(amounts[0])} here; it is {_money(row[0]['amount'])}"
                s.add("amount_mismatch", where, detail)


def _status_and_dates(s: _Sample) -> None:
    for d in s.docs:
        _stated(s, d.path, d.body)
        _own_document(s, d)
    for sheet in s.sheets:
        _sheet_notes(s, sheet)
    for x in s.site.get("inspections", []):
        _stated(s, f"api/site.yaml:{x['id']}", str(x.get("notes", "")))
    for q in s.questions:
        _stated(s, q.where, q.answer)  # a query asks, it states nothing
    for rel, card in s.cards:
        for example in card.get("examples") or []:
            _card_example(s, f"{rel}:{card.get('name')}", str(card.get("name")), str(example))


def _own_document(s: _Sample, d: _Doc) -> None:
    """An RFI's or change order's own document: its date, status, answer date and amount."""
    kind = {"rfi": "rfi", "change_order": "co"}.get(d.kind)
    own = _first_id(d.title, kind) if kind else None
    record = s.rfis.get(own or "") or s.cos.get(own or "")
    if own is None or record is None:
        return
    if d.date != _date(record["date"]):
        s.add("date_mismatch", d.path, f"{own} is dated {record['date']}, its document {d.date}")
    words = RFI_STATUS_RE if kind == "rfi" else CO_STATUS_RE
    m = OWN_STATUS_RE.search(d.body) or words.search(d.body[:300])
    if m is None:
        s.add("status_mismatch", d.path, f"{own}'s document states no status")
    elif m.group(1).lower() != record["status"]:
        detail = f"{own}'s document says {m.group(1).lower()}; it is {record['status']}"
        s.add("status_mismatch", d.path, detail)
    answered = _date(record.get("answer_date"))
    if kind == "rfi" and answered and answered not in _dates(d.body):
        s.add("date_mismatch", d.path, f"{own}'s document does not give its answer {answered}")
    if kind == "co" and _money(float(record["amount"])) not in d.body:
        s.add("amount_mismatch", d.path, f"{own}'s document does not state its amount")


def _sheet_notes(s: _Sample, sheet: dict[str, Any]) -> None:
    """PER cites a settled item dated before the revision; PENDING one that is not settled."""
    where = f"blueprints/sheets.yaml:{sheet.get('file')}"
    notes = " ".join(sheet.get("notes") or [])
    _stated(s, where, notes)
    revised = _date(sheet.get("revision_date"))
    for word, ident in NOTE_REF_RE.findall(notes):
        record = s.rfis.get(ident) or s.cos.get(ident)
        if record is None:
            continue
        settled = record["status"] in ("answered", "closed", "approved")
        if (word == "PER") != settled:
            s.add("status_mismatch", where, f"{word} {ident}, which is {record['status']}")
        done = _date(record.get("answer_date") or record["date"])
        if word == "PER" and settled and revised and done and revised < done:
            s.add("date_mismatch", where, f"revised {revised}, before {ident} ({done})")


def _card_example(s: _Sample, where: str, tool: str, example: str) -> None:
    """A request names items in the state its tool acts on."""
    low = example.casefold()
    for kind, ident, _a, _b in _ids(example):
        problem = ""
        if tool == "cancel_inspection" and kind == "insp" and ident in s.inspections:
            result = s.inspections[ident]["result"]
            problem = "" if result == "scheduled" else f"cancels {ident}, which is {result}"
        elif tool == "submit_change_order" and kind == "co" and ident in s.cos:
            status = s.cos[ident]["status"]
            problem = "" if status == "pending" else f"submits {ident}, which is {status}"
        elif tool == "update_rfi_status" and kind == "rfi" and ident in s.rfis:
            status = s.rfis[ident]["status"]
            if "reopen" in low or "back to open" in low:
                bad = status == "open"
            elif "answered" in low:
                bad = status != "open"
            else:
                bad = "close" in low and status == "closed"
            problem = f"{example!r}, but {ident} is {status}" if bad else ""
        if problem:
            s.add("status_mismatch", where, problem)


def _after_data_date(s: _Sample) -> None:
    day = s.as_of

    def late(where: str, what: str, value: Any) -> None:
        d = _date(value)
        if d and d > day:
            s.add("after_data_date", where, f"{what} {d} is after the data date {day}")

    for n, r in s.rfis.items():
        late("domain.yaml:rfis", f"{n} asked", r["date"])
        late("domain.yaml:rfis", f"{n} answered", r.get("answer_date"))
    for n, c in s.cos.items():
        late("domain.yaml:change_orders", f"{n} dated", c["date"])
    for table, key, col in (
        ("invoices", "invoice_no", "invoice_date"),
        ("actual_costs", "cost_id", "cost_date"),
        ("subcontracts", "subcontract_id", "executed_date"),
    ):
        for r in s.rows(f"SELECT {key}, {col} FROM {table}"):
            late(f"db/seed.sql:{table}", f"{r[key]} {col}", r[col])
    for i in s.inspections.values():
        held_on = _date(i["date"])
        if i["result"] != "scheduled":
            late("api/site.yaml:inspections", i["id"], held_on)
        elif held_on and held_on <= day:
            detail = f"{i['id']} is still scheduled on {held_on}, not after the data date {day}"
            s.add("after_data_date", "api/site.yaml:inspections", detail)
    for w in s.site.get("weather_delays", []):
        late("api/site.yaml:weather_delays", f"{w['project']} delay", w["date"])
    for x in s.site.get("site_status", []):
        late("api/site.yaml:site_status", f"{x['project']} status", x.get("last_updated"))
    for doc in s.docs:
        late(doc.path, "the document's date", doc.date)
    for code, ms in s.schedules.items():
        for m in ms:
            late(f"schedules/{code}.csv", f"{m['milestone_id']} finished", m["actual_finish"])


def _invoices(s: _Sample) -> None:
    names = {k: str(v["name"]) for k, v in s.vendors.items()}
    share: dict[tuple[str, str], float] = defaultdict(float)
    for d in s.docs:
        own = _first_id(d.title, "co")
        if d.kind != "change_order" or own not in s.cos or s.cos[own]["status"] != "approved":
            continue
        for line in d.body.splitlines():
            amounts = _amounts(line)
            for vid, name in names.items():
                if name in line and amounts:
                    share[(d.project, vid)] += amounts[0]
    committed: dict[tuple[str, str], float] = defaultdict(float)
    for r in s.rows("SELECT project_code, vendor_id, contract_amount FROM subcontracts"):
        committed[(r["project_code"], r["vendor_id"])] += float(r["contract_amount"])
    billed: dict[tuple[str, str], float] = defaultdict(float)
    for r in s.rows("SELECT * FROM invoices"):
        billed[(r["project_code"], r["vendor_id"])] += float(r["amount"])
        where = f"db/seed.sql:invoices:{r['invoice_no']}"
        if not r["invoice_no"].startswith(f"INV-{r['vendor_id']}-"):
            s.add("invoice_over_subcontract", where, f"the number is not {r['vendor_id']}'s")
        due, issued = _date(r["due_date"]), _date(r["invoice_date"])
        if due and issued and (due - issued).days != NET_DAYS:
            s.add("invoice_over_subcontract", where, f"due {due}, not {NET_DAYS} days after")
    for (code, vid), total in sorted(billed.items()):
        sub, extra = committed.get((code, vid), 0.0), share.get((code, vid), 0.0)
        if total > sub + extra + 0.005:
            detail = (
                f"{names.get(vid, vid)} invoiced {_money(total)} on {code}: subcontracts "
                f"{_money(sub)} + approved change orders {_money(extra)}"
            )
            s.add("invoice_over_subcontract", f"db/seed.sql:invoices:{code}:{vid}", detail)


def _budget_trade(s: _Sample) -> None:
    lines: dict[str, list[set[str]]] = defaultdict(list)
    for r in s.rows("SELECT project_code, category FROM budgets"):
        lines[r["project_code"]].append(_words(r["category"]))

    def covered(code: str, *texts: str) -> bool:
        wanted = set().union(*(_words(t) for t in texts))
        return any(wanted & category for category in lines.get(code, []))

    subs: dict[tuple[str, str], float] = defaultdict(float)
    for r in s.rows("SELECT * FROM subcontracts"):
        subs[(r["project_code"], r["vendor_id"])] += float(r["contract_amount"])
        trade = str(s.vendors.get(r["vendor_id"], {}).get("trade", ""))
        if not covered(r["project_code"], trade, r["scope"]):
            detail = f"{r['subcontract_id']} ({trade}): no budget line on {r['project_code']}"
            s.add("budget_trade", "db/seed.sql:subcontracts", detail)
    for d in s.docs:
        if d.kind == "bid":
            vid = _first_id(d.body, "vendor")
            if vid is None or vid not in s.vendors:
                s.add("budget_trade", d.path, "the bid names no known vendor id")
                continue
            vendor = s.vendors[vid]
            if not covered(d.project, str(vendor["trade"])):
                detail = f"{vendor['name']} bid {vendor['trade']}: no budget line on {d.project}"
                s.add("budget_trade", d.path, detail)
            total = BID_TOTAL_RE.search(d.body)
            amount = subs.get((d.project, vid))
            if total and amount is not None and float(total.group(1).replace(",", "")) != amount:
                s.add(
                    "budget_trade", d.path, f"bid ${total.group(1)}, subcontract {_money(amount)}"
                )
        elif d.kind == "proposal":
            for line in d.body.splitlines():
                amounts = _amounts(line)
                for vid, vendor in s.vendors.items():
                    amount = subs.get((d.project, vid))
                    named = amounts and amount is not None and vendor["name"] in line
                    if named and amounts[0] != amount:
                        detail = f"{vendor['name']} at {_money(amounts[0])}, subcontract "
                        s.add("budget_trade", d.path, detail + _money(amount or 0.0))


def _schedule_status(s: _Sample) -> None:
    day = s.as_of
    for code, ms in s.schedules.items():
        for m in ms:
            status, actual = m["status"], _date(m["actual_finish"])
            start, finish = _date(m["planned_start"]), _date(m["planned_finish"])
            problem = ""
            if status not in MILESTONE_STATUSES:
                problem = "an unknown status"
            elif start and finish and finish < start:
                problem = "it finishes before it starts"
            elif (status == "complete") != (actual is not None):
                problem = "an actual finish is for complete milestones only"
            elif status == "late" and finish and finish >= day:
                problem = f"late, but its planned finish {finish} is ahead"
            elif status == "in_progress" and finish and finish < day:
                problem = f"in progress after its planned finish {finish}: late"
            elif status == "not_started" and start and start <= day:
                problem = f"not started, planned to start {start}"
            if problem:
                detail = f"{m['milestone_id']} {m['milestone']} ({status}): {problem}"
                s.add("schedule_status", f"schedules/{code}.csv", detail)


def _progress(s: _Sample, code: str) -> tuple[bool, bool, bool]:
    """(work started, substantial completion reached, every milestone complete)."""
    ms = s.milestones(code)
    under_way = any(m["status"] in ("in_progress", "late") for m in ms)
    # a complete milestone of no duration (notice to proceed) is an event, not work
    worked = any(
        m["status"] == "complete" and m["planned_start"] != m["planned_finish"] for m in ms
    )
    sc = s.milestone(code, "substantial completion")
    done = bool(ms) and all(m["status"] == "complete" for m in ms)
    return under_way or worked, bool(sc and sc["status"] == "complete"), done


def _project_status(s: _Sample) -> None:
    for code, p in s.projects.items():
        if code not in s.schedules:
            continue
        started, reached, done = _progress(s, code)
        want = "complete" if done else "closeout" if reached else "active" if started else None
        want = want or "preconstruction"
        if p["status"] != want:
            detail = f"{code} is {p['status']}; its schedule says {want}"
            s.add("project_status", "domain.yaml:projects", detail)


def _site_phase(s: _Sample) -> None:
    for x in s.site.get("site_status", []):
        code, phase = str(x["project"]), str(x.get("phase", ""))
        where = f"api/site.yaml:site_status:{code}"
        crew = int(x.get("crew_count") or 0)
        idle = crew == 0 or "preconstruction" in phase.casefold() or "no site work" in phase
        started, _reached, done = _progress(s, code)
        ms = s.milestones(code)
        if idle and started and not done:
            under_way = [m["milestone"] for m in ms if m["status"] in ("in_progress", "late")]
            detail = f"{phase!r} with crew {crew}, but under way: {', '.join(under_way)}"
            s.add("site_phase", where, detail)
        if not idle and not started:
            s.add("site_phase", where, f"crew {crew} on site before any milestone started")
        for word in sorted(_words(phase)):
            named = [m["milestone"] for m in ms if word in _words(m["milestone"])]
            if named and all(m["status"] == "complete" for m in ms if m["milestone"] in named):
                detail = f"{phase!r} names finished work: {word!r} ({', '.join(named)})"
                s.add("site_phase", where, detail)


def _sheet_after_work(s: _Sample) -> None:
    for sheet in s.sheets:
        if str(sheet.get("discipline", "")).casefold() != "structural":
            continue
        words = _words(str(sheet.get("title", "")))
        scored = [(len(words & _words(m["milestone"])), m) for m in s.milestones(sheet["project"])]
        best = max((n for n, _m in scored), default=0)
        served = [m for n, m in scored if best and n == best]
        revised = _date(sheet.get("revision_date"))
        finish = max((_date(m["planned_finish"]) or dt.date.min for m in served), default=None)
        if revised and finish and revised > finish:
            work = ", ".join(m["milestone"] for m in served)
            detail = f"revised {revised}, after {work} is planned to finish ({finish})"
            s.add("sheet_after_work", f"blueprints/sheets.yaml:{sheet.get('file')}", detail)


def _sheet_register(s: _Sample) -> None:
    folder = s.data_dir / "blueprints"
    listed: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for sheet in s.sheets:
        code, number, name = (str(sheet.get(k)) for k in ("project", "sheet_number", "file"))
        where = f"blueprints/sheets.yaml:{name}"
        listed.add(name)
        if name != f"{code}_{number}.png" or (code, number) in seen:
            s.add("sheet_register", where, f"a duplicate or misnamed entry for {code} {number}")
        seen.add((code, number))
        if not (folder / name).is_file():
            s.add("sheet_register", where, "no PNG is drawn for it")
        start = _date(s.projects.get(code, {}).get("start"))
        revised = _date(sheet.get("revision_date"))
        if start is None or revised is None:
            continue
        notes = " ".join(sheet.get("notes") or []).casefold()
        early_issue = "not for construction" in notes or "preconstruction" in notes
        if revised < start and not early_issue:
            detail = f"revised {revised}, before the start {start}, yet for construction"
            s.add("sheet_register", where, detail)
        last = s.revised_completion(code, s.as_of)
        if last and revised > last:
            s.add("sheet_register", where, f"revised {revised}, after completion ({last})")
    for png in sorted(folder.glob("*.png")):
        if png.name not in listed:
            s.add("sheet_register", f"blueprints/{png.name}", "not in the register")


def _substantial_completion(s: _Sample) -> None:
    rule = "substantial_completion"
    for code, p in s.projects.items():
        original = s.original_completion(code)
        revised = s.revised_completion(code, s.as_of)
        stated = _date(p.get("revised_substantial_completion"))
        if stated != revised:
            days = s.approved_days(code, s.as_of)
            detail = f"{code} revised {stated}, not {revised} ({original} + {days} days)"
            s.add(rule, "domain.yaml:projects", detail)
        sc = s.milestone(code, "substantial completion")
        if code in s.schedules and (sc is None or _date(sc["planned_finish"]) != original):
            detail = f"its substantial completion milestone does not plan {original}"
            s.add(rule, f"schedules/{code}.csv", detail)
    for d in s.docs:
        original = s.original_completion(d.project)
        if original is None or d.date is None:
            continue
        as_of = s.revised_completion(d.project, d.date)
        if d.kind == "contract":
            mentions = (_dates(_near(d.body, m.end())) for m in SC_PHRASE_RE.finditer(d.body))
            found: list[dt.date] = next((x for x in mentions if x), [])  # first one dated
            if found and found[0] != original:
                s.add(rule, d.path, f"the contract gives {found[0]}, the contract date {original}")
        for pattern in (REVISED_RE, CONTRACT_DATE_RE):
            for m in pattern.finditer(d.body):
                said = next(iter(_dates(_near(d.body, m.end()))), None)
                if said and said != as_of:
                    detail = f"{m.group(0)!r} {said}; on {d.date} it is {as_of}"
                    s.add(rule, d.path, f"{detail} ({original} + approved change-order days)")
        co = s.cos.get(_first_id(d.title, "co") or "")
        adds = co is not None and co["status"] == "approved" and int(co["days_added"]) > 0
        if d.kind == "change_order" and adds and not REVISED_RE.search(d.body):
            s.add(rule, d.path, f"it adds days but states no revised date ({as_of})")


def _questions(s: _Sample) -> None:
    for q in s.questions:
        tools = list(q.item.get("expected_tools") or [])
        code = q.project(s.projects)
        if q.sql:
            _question_sql(s, q, q.sql)
        if q.item.get("source_doc"):
            _question_source(s, q, str(q.item["source_doc"]))
        if tools == ["search_blueprints"]:
            _question_sheets(s, q, code)
        if tools == ["get_project_schedule"] and code:
            _question_schedule(s, q, code)
        if len(tools) == 1 and tools[0] in API_TOOLS and (code or tools[0] != "get_site_status"):
            got = _norm(json.dumps(_api_record(s, tools[0], code, q.args), default=str))
            for k in q.item.get("answer_keywords") or []:
                if _norm(str(k).strip()) not in got:
                    s.add("question_api", q.where, f"{k!r} is not in what {tools[0]} returns")


def _question_sql(s: _Sample, q: _Question, sql: str) -> None:
    if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
        s.add("question_sql", q.where, "the expected SQL is not a query")
        return
    try:
        rows = s.db.execute(sql).fetchall()
    except sqlite3.Error as exc:
        s.add("question_sql", q.where, f"the expected SQL fails: {exc}")
        return
    cells = [_value(v) for row in rows for v in row]
    numeric = [c for c in zip(*rows, strict=True) if all(isinstance(v, int | float) for v in c)]
    got = _norm(" ".join([*cells, *(_value(sum(c)) for c in numeric), str(len(rows))]))
    for k in q.item.get("answer_keywords") or []:
        if _norm(str(k).strip()) not in got:
            s.add("question_sql", q.where, f"{k!r} is not in the result of the expected SQL")


def _question_source(s: _Sample, q: _Question, doc_id: str) -> None:
    doc = next((d for d in s.docs if d.meta.get("id") == doc_id), None)
    if doc is None:
        s.add("unknown_reference", q.where, f"the source document {doc_id} does not exist")
        return
    missing = sorted(_numbers(q.answer) - _numbers(doc.body))
    if missing:
        s.add("question_source", q.where, f"{missing} of the answer are not in {doc.path}")


def _question_sheets(s: _Sample, q: _Question, code: str | None) -> None:
    named = [ident for kind, ident, _a, _b in _ids(q.answer) if kind == "sheet"]
    scope = code or _first_id(q.answer, "project")
    sheets = [x for x in s.sheets if scope in (None, x["project"]) and x["sheet_number"] in named]
    if {x["sheet_number"] for x in sheets} != set(named):
        return  # unknown_reference reports the sheet
    said = set(_dates(q.answer))
    if not said <= {_date(x["revision_date"]) for x in sheets}:
        s.add("question_sheets", q.where, f"{sorted(map(str, said))} are not {named}'s dates")
    revisions = set(re.findall(r"revision (\d+)", q.answer))
    if not revisions <= {str(x["revision"]) for x in sheets}:
        s.add("question_sheets", q.where, f"revisions {sorted(revisions)} are not {named}'s")
    first, last = _date(q.args.get("start_date")), _date(q.args.get("end_date"))
    wanted = str(q.args.get("description", "")).casefold()
    disciplines = {str(x["discipline"]).casefold() for x in s.sheets}
    if first is None or last is None or wanted not in disciplines | {"drawings", "sheets"}:
        return  # a window only over a discipline or the whole set is checkable
    window = {
        x["sheet_number"]
        for x in s.sheets
        if code in (None, x["project"])
        and wanted in (str(x["discipline"]).casefold(), "drawings", "sheets")
        and first <= (_date(x["revision_date"]) or dt.date.min) <= last
    }
    if window != set(named):
        detail = f"the register has {sorted(window)} in {first}..{last}, not {sorted(set(named))}"
        s.add("question_sheets", q.where, detail)


def _question_schedule(s: _Sample, q: _Question, code: str) -> None:
    for day in _dates(q.answer):
        dated = [
            m
            for m in s.milestones(code)
            if day in {_date(m[k]) for k in ("planned_start", "planned_finish", "actual_finish")}
        ]
        if not dated:
            s.add("question_schedule", q.where, f"no milestone of {code} is dated {day}")
        for words, status in ANSWER_STATUS.items():
            if words in q.answer.casefold() and dated and all(m["status"] != status for m in dated):
                detail = f"{words!r}, but the milestone dated {day} is {dated[0]['status']}"
                s.add("question_schedule", q.where, detail)


def _api_record(s: _Sample, tool: str, code: str | None, args: dict[str, Any]) -> Any:
    """What the field API returns for the call, from the data it serves."""
    if tool == "get_site_status":
        status: dict[str, Any] = next(
            (x for x in s.site.get("site_status", []) if x["project"] == code), {}
        )
        return {**status, "superintendent": s.projects.get(code or "", {}).get("superintendent")}
    if tool == "list_inspections":
        result = args.get("result")
        return [
            i
            for i in s.inspections.values()
            if code in (None, i["project"]) and result in (None, i["result"])
        ]
    if tool == "list_weather_delays":
        records = [w for w in s.site.get("weather_delays", []) if code in (None, w["project"])]
        return {"records": records, "total_days_lost": sum(int(w["days_lost"]) for w in records)}
    r = s.rfis.get(str(args.get("rfi_number", "")).strip().upper())
    if r is None:
        return {}
    asked = _date(r["date"]) or s.as_of
    end = _date(r.get("answer_date")) or s.as_of
    return {**r, "days_open": max(0, (end - asked).days)}


RULES: tuple[Callable[[_Sample], None], ...] = (
    _project_identity,
    _references,
    _status_and_dates,
    _after_data_date,
    _invoices,
    _budget_trade,
    _schedule_status,
    _project_status,
    _site_phase,
    _sheet_after_work,
    _sheet_register,
    _substantial_completion,
    _questions,
)


def check_sample(data_dir: Path, toolspecs_dir: Path | None = None) -> list[Finding]:
    """Every disagreement between the sources of the sample under ``data_dir``.

    ``toolspecs_dir`` holds the tool cards and OpenAPI document whose examples are checked too
    (default: the ``toolspecs`` folder next to ``data_dir``, if there is one). An empty list
    means the sources agree.
    """
    sample = _Sample(Path(data_dir), Path(toolspecs_dir) if toolspecs_dir else None)
    try:
        for rule in RULES:
            rule(sample)
    finally:
        sample.db.close()
    unique: dict[tuple[str, str, str], Finding] = {}
    for f in sample.findings:
        unique.setdefault((f.rule, f.where, f.detail), f)
    return list(unique.values())
