"""The field API: site status, inspections, weather delays and RFI status of the sample projects.

Facts come from ``data/domain.yaml`` (projects, RFIs) and ``data/api/site.yaml`` (field data),
so the API agrees with the database and the documents. Its OpenAPI document, exported to
``toolspecs/construction_api.openapi.json``, is what the agent's REST tools are built from.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml

try:
    from fastapi import FastAPI, Header, HTTPException, Query
    from fastapi import Path as PathParam
except ImportError as exc:  # the ``sample`` extra
    from toolrag.errors import ConfigError

    raise ConfigError(
        "The sample field API needs FastAPI, which is not installed.",
        hint="Install the sample extra: pip install 'toolrag[sample]' (scripts/setup.sh does).",
    ) from exc
from pydantic import BaseModel, ConfigDict, Field

from toolrag.sample.field_api.state import FieldState

Result = Literal["passed", "failed", "partial", "scheduled", "cancelled"]
Recipient = Literal["owner", "architect", "lender"]
Key = Annotated[str | None, Header(description="Repeat-safe key for this write.")]
RfiStatus = Literal["open", "answered", "closed"]


class ProjectSummary(BaseModel):
    code: str = Field(description="Project code, e.g. GRB-107.")
    name: str = Field(description="Project name.")
    status: str = Field(description="preconstruction, active, closeout or complete.")


class SiteRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: str
    phase: str
    crew_count: int
    safety_incidents_ytd: int
    last_updated: dt.date


class SiteStatus(BaseModel):
    project: str = Field(description="Project code.")
    name: str = Field(description="Project name.")
    phase: str = Field(description="The work going on at the site.")
    crew_count: int = Field(description="Workers on site on the last update (0: no site work).")
    superintendent: str = Field(description="Granite Ridge superintendent of the project.")
    safety_incidents_ytd: int = Field(description="Recordable safety incidents this year.")
    last_updated: dt.date = Field(description="Date of the status.")


class Inspection(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a typo in site.yaml fails loudly
    id: str = Field(description="Inspection id, e.g. INSP-101-02.")
    project: str = Field(description="Project code.")
    date: dt.date = Field(description="Inspection date.")
    type: str = Field(description="What was inspected.")
    inspector: str = Field(description="The authority that inspected.")
    result: Result = Field(
        description="passed, failed, partial; scheduled (not yet held) or cancelled."
    )
    notes: str = Field(description="The inspector's findings.")


class WeatherDelay(BaseModel):
    model_config = ConfigDict(extra="forbid")
    project: str = Field(description="Project code.")
    date: dt.date = Field(description="First day lost.")
    days_lost: int = Field(description="Working days lost.")
    cause: str = Field(description="The weather that stopped work.")


class WeatherDelays(BaseModel):
    records: list[WeatherDelay] = Field(description="The matching weather delay records.")
    total_days_lost: int = Field(description="Sum of days_lost over the records.")


class Rfi(BaseModel):
    number: str = Field(description="RFI number, e.g. RFI-101-015.")
    project: str = Field(description="Project code.")
    subject: str = Field(description="What the RFI asks about.")
    status: RfiStatus = Field(description="open, answered or closed.")
    asked_date: dt.date = Field(description="Date the RFI was sent.")
    answer_date: dt.date | None = Field(description="Date it was answered (null while open).")
    days_open: int = Field(
        description="Days from asked to answered, or to the data date (2025-12-15) while open."
    )


class NoteIn(BaseModel):
    note: str = Field(min_length=1, max_length=2000, description="The note text.")
    author: str = Field(min_length=1, max_length=100, description="Who writes the note.")


class Note(NoteIn):
    id: int = Field(description="Note id.")
    inspection_id: str = Field(description="The inspection the note belongs to.")


class RfiDraftIn(BaseModel):
    project: str = Field(description="Project code (GRB-101) or name.")
    subject: str = Field(min_length=3, max_length=200, description="What the RFI asks about.")
    question: str = Field(min_length=3, max_length=4000, description="The question itself.")


class RfiDraft(BaseModel):
    draft_id: str = Field(description="Draft id, e.g. DRAFT-0001 (numbered when sent).")
    project: str = Field(description="Project code.")
    subject: str = Field(description="What the RFI asks about.")
    question: str = Field(description="The question.")
    status: Literal["draft"] = Field(description="Always draft: a person sends it.")


class RfiStatusIn(BaseModel):
    status: RfiStatus = Field(description="The new status: open, answered or closed.")
    note: str | None = Field(None, max_length=2000, description="Why the status changed.")


class CancelledInspection(BaseModel):
    id: str = Field(description="The cancelled inspection's id.")
    project: str = Field(description="Project code.")
    date: dt.date = Field(description="The date it was scheduled for.")
    result: Literal["cancelled"] = Field(description="Always cancelled.")


class SubmissionIn(BaseModel):
    recipient: Recipient = Field(description="Who receives it: owner, architect or lender.")
    note: str | None = Field(None, max_length=2000, description="Cover note for the recipient.")


class Submission(BaseModel):
    submission_id: str = Field(description="Submission reference, e.g. SUB-0001.")
    change_order: str = Field(description="Change order number, e.g. CO-101-02.")
    project: str = Field(description="Project code.")
    amount: float = Field(description="Change order amount in USD.")
    recipient: Recipient = Field(description="Who received it.")


class Health(BaseModel):
    status: str


def _load(data_dir: Path) -> dict[str, Any]:
    domain = yaml.safe_load((data_dir / "domain.yaml").read_text(encoding="utf-8-sig"))
    site = yaml.safe_load((data_dir / "api" / "site.yaml").read_text(encoding="utf-8-sig"))
    return {"domain": domain, "site": site}


def create_app(data_dir: Path, state_path: Path | None = None) -> FastAPI:
    """The FastAPI app over ``data_dir`` (domain.yaml + api/site.yaml); binds nothing.

    Writes (RFI drafts and status changes, cancelled inspections, change-order submissions,
    notes) go to the SQLite file ``state_path``, or stay in memory without one.
    """
    state = FieldState(state_path)
    facts = _load(data_dir)
    domain, site = facts["domain"], facts["site"]
    as_of: dt.date = site["as_of"]
    projects = {p["code"]: p for p in domain["projects"]}
    inspections = [Inspection(**i) for i in site["inspections"]]
    delays = [WeatherDelay(**d) for d in site["weather_delays"]]
    status_by_code = {
        r.project: r.model_dump() for r in (SiteRecord(**s) for s in site["site_status"])
    }
    change_orders = {c["number"]: c for c in domain["change_orders"]}

    def current(i: Inspection) -> Inspection:
        row = state.execute(
            "SELECT 1 FROM cancelled_inspections WHERE inspection_id = ?", (i.id,)
        ).fetchone()
        return i.model_copy(update={"result": "cancelled"}) if row else i

    app = FastAPI(
        title="Granite Ridge Builders field API",
        version="1.0.0",
        description=(
            "Field data of Granite Ridge Builders' projects as of 2025-12-15: daily site "
            "status, building inspections, weather delays and RFI status; RFI drafts and "
            "status changes, inspection notes, cancellations and change-order submissions."
        ),
        servers=[{"url": "http://127.0.0.1:8765"}],
    )

    def project_or_404(code: str) -> dict[str, Any]:
        """A project by code (GRB-107), name, or a fragment of one name (summit ridge)."""
        wanted = " ".join(code.split()).casefold()
        project = projects.get(wanted.upper())
        if project is None:
            matches = [p for p in projects.values() if wanted and wanted in p["name"].casefold()]
            project = matches[0] if len(matches) == 1 else None
        if project is None:
            known = ", ".join(f"{c} ({p['name']})" for c, p in projects.items())
            raise HTTPException(404, f"Unknown project {code!r}. Known projects: {known}")
        return project

    def rfi(r: dict[str, Any]) -> Rfi:
        end = r.get("answer_date") or as_of
        changed = state.execute(
            "SELECT status FROM rfi_status WHERE number = ?", (r["number"],)
        ).fetchone()
        return Rfi(
            number=r["number"],
            project=r["project"],
            subject=r["subject"],
            status=changed[0] if changed else r["status"],
            asked_date=r["date"],
            answer_date=r.get("answer_date"),
            days_open=max(0, (end - r["date"]).days),
        )

    @app.get(
        "/projects",
        operation_id="list_projects",
        summary="List the projects with their code, name and status.",
        description=(
            "Returns every project's code, name and status. Use it to find a project's code "
            "before calling the other endpoints. It does not return field data."
        ),
    )
    def list_projects(
        status: Annotated[
            str | None, Query(description="Only projects with this status, e.g. active.")
        ] = None,
    ) -> list[ProjectSummary]:
        return [
            ProjectSummary(code=p["code"], name=p["name"], status=p["status"])
            for p in projects.values()
            if status is None or p["status"] == status
        ]

    @app.get(
        "/projects/{project}/site-status",
        operation_id="get_site_status",
        summary="Get the current site status of one project.",
        description=(
            "Returns the project's current phase, crew count on site, superintendent and "
            "safety incidents this year. Use it for questions about what is happening on site "
            "now and how many workers are there. It does not return costs or schedules."
        ),
    )
    def get_site_status(
        project: Annotated[
            str, PathParam(description="Project code (GRB-107) or name (Summit Ridge Hotel).")
        ],
    ) -> SiteStatus:
        found = project_or_404(project)
        s = status_by_code[found["code"]]
        return SiteStatus(
            project=found["code"],
            name=found["name"],
            phase=s["phase"],
            crew_count=s["crew_count"],
            superintendent=found["superintendent"],
            safety_incidents_ytd=s["safety_incidents_ytd"],
            last_updated=s["last_updated"],
        )

    @app.get(
        "/inspections",
        operation_id="list_inspections",
        summary="List building inspections, filtered by project, result and date range.",
        description=(
            "Returns inspections with date, type, inspecting authority, result (passed, "
            "failed or partial once held; scheduled or cancelled before) and notes. Use it for "
            "questions about inspections, failed inspections, re-inspections and inspections "
            "still to come. It does not return RFIs or weather delays."
        ),
    )
    def list_inspections(
        project: Annotated[
            str | None,
            Query(
                description="Project code (GRB-101) or name (Riverside Medical Office Building)."
            ),
        ] = None,
        result: Annotated[
            Result | None,
            Query(
                description="passed, failed or partial (held); scheduled (on the calendar, not "
                "held yet) or cancelled."
            ),
        ] = None,
        since: Annotated[
            dt.date | None, Query(description="Earliest inspection date, YYYY-MM-DD.")
        ] = None,
        until: Annotated[
            dt.date | None, Query(description="Latest inspection date, YYYY-MM-DD.")
        ] = None,
    ) -> list[Inspection]:
        code = project_or_404(project)["code"] if project else None
        return [
            i
            for i in map(current, inspections)
            if (code is None or i.project == code)
            and (result is None or i.result == result)
            and (since is None or i.date >= since)
            and (until is None or i.date <= until)
        ]

    @app.get(
        "/inspections/{inspection_id}",
        operation_id="get_inspection",
        summary="Get one inspection by its id.",
        description=(
            "Returns one inspection with its result and notes. Use it when you know the "
            "inspection id. It does not list inspections."
        ),
    )
    def get_inspection(
        inspection_id: Annotated[str, PathParam(description="Inspection id, e.g. INSP-101-02.")],
    ) -> Inspection:
        for i in map(current, inspections):
            if i.id == inspection_id.strip().upper():
                return i
        raise HTTPException(404, f"Unknown inspection {inspection_id!r}.")

    @app.get(
        "/weather-delays",
        operation_id="list_weather_delays",
        summary="List weather delays and the total working days lost.",
        description=(
            "Returns weather delay records (date, days lost, cause) and their total days "
            "lost, filtered by project and date range. Use it for questions about days lost "
            "to weather. It does not return schedule milestones."
        ),
    )
    def list_weather_delays(
        project: Annotated[
            str | None,
            Query(description="Project code (GRB-103) or name (Harbor Point Apartments)."),
        ] = None,
        since: Annotated[dt.date | None, Query(description="Earliest date, YYYY-MM-DD.")] = None,
        until: Annotated[dt.date | None, Query(description="Latest date, YYYY-MM-DD.")] = None,
    ) -> WeatherDelays:
        code = project_or_404(project)["code"] if project else None
        records = [
            d
            for d in delays
            if (code is None or d.project == code)
            and (since is None or d.date >= since)
            and (until is None or d.date <= until)
        ]
        return WeatherDelays(records=records, total_days_lost=sum(d.days_lost for d in records))

    @app.get(
        "/rfis",
        operation_id="list_rfis",
        summary="List RFIs with their status and days open.",
        description=(
            "Returns requests for information with subject, status, asked and answer dates "
            "and days open. Use it for questions about open or answered RFIs. It does not "
            "return the RFI's answer text (search the documents for that)."
        ),
    )
    def list_rfis(
        project: Annotated[
            str | None,
            Query(
                description="Project code (GRB-101) or name (Riverside Medical Office Building)."
            ),
        ] = None,
        status: Annotated[RfiStatus | None, Query(description="open, answered or closed.")] = None,
    ) -> list[Rfi]:
        code = project_or_404(project)["code"] if project else None
        found = [rfi(r) for r in domain["rfis"] if code is None or r["project"] == code]
        return [r for r in found if status is None or r.status == status]

    @app.get(
        "/rfis/{rfi_number}",
        operation_id="get_rfi_status",
        summary="Get the status of one RFI by its number.",
        description=(
            "Returns one RFI's status, dates and days open. Use it when you know the RFI "
            "number. It does not return the answer text."
        ),
    )
    def get_rfi_status(
        rfi_number: Annotated[str, PathParam(description="RFI number, e.g. RFI-101-015.")],
    ) -> Rfi:
        for r in domain["rfis"]:
            if r["number"] == rfi_number.strip().upper():
                return rfi(r)
        raise HTTPException(404, f"Unknown RFI {rfi_number!r}.")

    @app.post(
        "/inspections/{inspection_id}/notes",
        operation_id="create_inspection_note",
        summary="Add a note to an inspection.",
        description=(
            "Stores a note on one inspection and returns it with its id. Use it only when the "
            "user asks to record a note. Repeating a request with the same Idempotency-Key "
            "returns the first note instead of adding another. It does not change the "
            "inspection's result."
        ),
    )
    def create_inspection_note(
        inspection_id: Annotated[str, PathParam(description="Inspection id, e.g. INSP-101-02.")],
        body: NoteIn,
        idempotency_key: Annotated[
            str | None, Header(description="Repeat-safe key for this write.")
        ] = None,
    ) -> Note:
        inspection = get_inspection(inspection_id)

        def write() -> dict[str, Any]:
            cursor = state.execute(
                "INSERT INTO notes (inspection_id, note, author) VALUES (?, ?, ?)",
                (inspection.id, body.note, body.author),
            )
            note = Note(id=cursor.lastrowid or 0, inspection_id=inspection.id, **body.model_dump())
            return note.model_dump(mode="json")

        return Note(**state.once(idempotency_key, write))

    @app.post(
        "/rfis/drafts",
        operation_id="create_rfi_draft",
        summary="Create a draft RFI for a project.",
        description=(
            "Stores a new RFI as a draft for a person to review and send, and returns its "
            "draft id. Use it when the user asks to write up, draft or prepare an RFI. It "
            "does not send the RFI or give it an RFI number."
        ),
        status_code=201,
    )
    def create_rfi_draft(body: RfiDraftIn, idempotency_key: Key = None) -> RfiDraft:
        code = project_or_404(body.project)["code"]

        def write() -> dict[str, Any]:
            cursor = state.execute(
                "INSERT INTO rfi_drafts (project, subject, question, created) VALUES (?,?,?,?)",
                (code, body.subject, body.question, state.now()),
            )
            draft = RfiDraft(
                draft_id=f"DRAFT-{cursor.lastrowid:04d}",
                project=code,
                subject=body.subject,
                question=body.question,
                status="draft",
            )
            return draft.model_dump(mode="json")

        return RfiDraft(**state.once(idempotency_key, write))

    @app.patch(
        "/rfis/{rfi_number}/status",
        operation_id="update_rfi_status",
        summary="Change the status of one RFI.",
        description=(
            "Sets an RFI's status to open, answered or closed and returns the RFI as it is "
            "now. Use it when the user asks to close, reopen or mark an RFI answered. It does "
            "not record the answer text."
        ),
    )
    def update_rfi_status(
        rfi_number: Annotated[str, PathParam(description="RFI number, e.g. RFI-101-015.")],
        body: RfiStatusIn,
        idempotency_key: Key = None,
    ) -> Rfi:
        number = get_rfi_status(rfi_number).number

        def write() -> dict[str, Any]:
            state.execute(
                "INSERT INTO rfi_status (number, status, note, changed) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(number) DO UPDATE SET status = excluded.status, "
                "note = excluded.note, changed = excluded.changed",
                (number, body.status, body.note, state.now()),
            )
            return get_rfi_status(number).model_dump(mode="json")

        return Rfi(**state.once(idempotency_key, write))

    @app.delete(
        "/inspections/{inspection_id}",
        operation_id="cancel_inspection",
        summary="Cancel a scheduled inspection.",
        description=(
            "Cancels one inspection that is scheduled and not yet held, and returns it marked "
            "cancelled. Use it only when the user asks to cancel an upcoming inspection. It "
            "does not cancel an inspection that already has a result."
        ),
    )
    def cancel_inspection(
        inspection_id: Annotated[str, PathParam(description="Inspection id, e.g. INSP-101-06.")],
        idempotency_key: Key = None,
    ) -> CancelledInspection:
        inspection = get_inspection(inspection_id)
        if inspection.result not in ("scheduled", "cancelled"):
            raise HTTPException(
                409,
                f"{inspection.id} was held on {inspection.date} ({inspection.result}); only "
                "scheduled inspections can be cancelled.",
            )

        def write() -> dict[str, Any]:
            state.execute(
                "INSERT OR IGNORE INTO cancelled_inspections (inspection_id, reason, cancelled) "
                "VALUES (?, ?, ?)",
                (inspection.id, "cancelled through the field API", state.now()),
            )
            cancelled = CancelledInspection(
                id=inspection.id, project=inspection.project, date=inspection.date,
                result="cancelled",
            )  # fmt: skip
            return cancelled.model_dump(mode="json")

        return CancelledInspection(**state.once(idempotency_key, write))

    @app.post(
        "/change-orders/{change_order}/submissions",
        operation_id="submit_change_order",
        summary="Submit a pending change order to the owner, architect or lender.",
        description=(
            "Sends one pending change order outside the company for approval and returns the "
            "submission reference. Use it only when the user asks to submit or send a change "
            "order. It does not submit a change order that is already approved."
        ),
        status_code=201,
    )
    def submit_change_order(
        change_order: Annotated[str, PathParam(description="Change order number, CO-101-02.")],
        body: SubmissionIn,
        idempotency_key: Key = None,
    ) -> Submission:
        co = change_orders.get(change_order.strip().upper())
        if co is None:
            raise HTTPException(404, f"Unknown change order {change_order!r}.")
        if co["status"] != "pending":
            raise HTTPException(
                409, f"{co['number']} is {co['status']}; only pending change orders are submitted."
            )

        def write() -> dict[str, Any]:
            cursor = state.execute(
                "INSERT INTO change_order_submissions (number, recipient, note, submitted) "
                "VALUES (?, ?, ?, ?)",
                (co["number"], body.recipient, body.note, state.now()),
            )
            submission = Submission(
                submission_id=f"SUB-{cursor.lastrowid:04d}", change_order=co["number"],
                project=co["project"], amount=float(co["amount"]), recipient=body.recipient,
            )  # fmt: skip
            return submission.model_dump(mode="json")

        return Submission(**state.once(idempotency_key, write))

    @app.get("/health", operation_id="get_health", summary="Health check.")
    def get_health() -> Health:
        return Health(status="ok")

    return app
