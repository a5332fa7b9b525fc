"""Content tools: three access patterns over the content indexes (one retriever, many tools)."""

import datetime as dt
import re
from typing import Any, Literal

from toolrag.content.index import ContentIndex, Hit, SearchFilters
from toolrag.content.projects import ProjectCatalog
from toolrag.tools.base import GuardedToolSpec
from toolrag.tools.result import ErrorCode, Source, ToolResult
from toolrag.types import ContentType

DocumentType = Literal[
    "contract", "proposal", "bid", "change_order", "rfi", "specification", "meeting_minutes"
]

PASSAGE_CHARS = 1200


_STEM = 6  # "complete" and "completion" share "comple"
_STOP = frozenset({"the", "and", "for", "with", "from", "date"})


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:_STEM] for w in words if len(w) > 2 and w not in _STOP}


def best_named(hits: list[Hit], words: str) -> list[Hit]:
    """The hits whose titles share the most words with ``words`` (a word matches on its first
    six letters, so "completion" finds "complete"), in their order; none when no title shares
    a word."""
    wanted = _stems(words)
    scores = [len(wanted & _stems(h.title)) for h in hits]
    top = max(scores, default=0)
    return [h for h, score in zip(hits, scores, strict=True) if top and score == top]


def _source(hit: Hit, locator: str) -> Source:
    return Source(
        file=hit.source, doc_id=hit.doc_id, title=hit.title, locator=locator, score=hit.score
    )


CONTENT_TOOL_TYPES: dict[str, ContentType] = {
    "search_documents": "documents",
    "search_blueprints": "blueprints",
    "get_project_schedule": "schedules",
}
"""The content type each content tool searches."""


def milestone_summary(title: str, extra: dict[str, Any]) -> str:
    """One sentence a small model can copy: the planned finish first (what "when is X
    planned" asks), then the start, the status and the actual finish."""
    finish, start = extra.get("planned_finish", ""), extra.get("planned_start", "")
    text = f"{title}: planned to finish {finish}" if finish else f"{title}:"
    if start:
        text += f" (planned start {start})"
    if status := extra.get("status", ""):
        text += f"; {str(status).replace('_', ' ')}"
    if actual := extra.get("actual_finish", ""):
        text += f", finished {actual}"
    return text + "."


class ContentToolSpec(GuardedToolSpec):
    """Search tools over the documents, blueprints and schedules of the content indexes."""

    spec_functions = [  # noqa: RUF012 - BaseToolSpec declares it as an instance attribute
        "search_documents",
        "search_blueprints",
        "get_project_schedule",
    ]

    def __init__(
        self,
        documents: ContentIndex,
        blueprints: ContentIndex,
        schedules: ContentIndex,
        catalog: ProjectCatalog,
        top_k: int = 3,
    ) -> None:
        self.documents = documents
        self.blueprints = blueprints
        self.schedules = schedules
        self.catalog = catalog
        self.top_k = top_k

    def search_documents(
        self,
        query: str,
        document_type: DocumentType | None = None,
        project: str | None = None,
    ) -> ToolResult:
        """Search the text documents of construction projects: contracts, proposals, bids,
        change orders, RFIs, specifications and meeting minutes.

        Use it for facts written in documents: contract values and terms, bid amounts, change
        order amounts, RFI questions and answers, specification requirements, meeting decisions.
        Returns the most relevant passages with their document id, title, type, date, file and
        score. It does not search drawings or schedules, and does not compute totals.

        Args:
            query: What to look for, in the words of the question (the subject, not the project
                name).
            document_type: Only this kind of document: contract, proposal, bid,
                change_order, rfi, specification or meeting_minutes.
            project: Only this project, by code (GRB-101) or name (Riverside Medical
                Office Building).
        """
        if not query.strip():
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                "The query is empty.",
                suggestion="Describe what to look for in a few words.",
            )
        filters = SearchFilters(
            project=self.catalog.resolve(project) if project else None, doc_type=document_type
        )
        hits = self.documents.search(query, k=self.top_k, filters=filters)
        if not hits:
            return ToolResult.ok([], suggestion="No passage matched; drop a filter or reword.")
        data = [
            {
                "doc_id": h.doc_id,
                "title": h.title,
                "project": h.project,
                "type": h.doc_type,
                "date": h.date,
                "file": h.source,
                "score": h.score,
                "text": h.text[:PASSAGE_CHARS],
            }
            for h in hits
        ]
        return ToolResult.ok(data, sources=[_source(h, f"chunk {h.chunk}") for h in hits])

    def search_blueprints(
        self,
        description: str,
        start_date: dt.date | None = None,
        end_date: dt.date | None = None,
        project: str | None = None,
        discipline: str | None = None,
    ) -> ToolResult:
        """Search blueprint drawing sheets (plans, elevations, details) by what they show and by
        revision date.

        Use it to find which drawing sheets exist for a topic, a discipline (architectural,
        structural, mechanical, electrical, plumbing, civil, fire protection) or a project, and
        which sheets were revised in a date range. Returns sheets with sheet number, title,
        discipline, project, revision and revision date, read from each sheet's title block. It
        does not search contracts or other text documents.

        Args:
            description: What the drawing shows, in the words of the question (a room, system or
                discipline); "drawing sheets" when the question names no subject.
            start_date: Earliest revision date, YYYY-MM-DD (inclusive).
            end_date: Latest revision date, YYYY-MM-DD (inclusive).
            project: Only this project, by code (GRB-101) or name.
            discipline: Only sheets of this discipline (structural, mechanical, electrical,
                plumbing, civil, architectural, fire protection...).
        """
        if start_date and end_date and start_date > end_date:
            return ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                f"start_date {start_date} is after end_date {end_date}.",
                suggestion="Swap the dates so that start_date <= end_date.",
            )
        if discipline and discipline.strip():
            known = {d.lower(): d for d in self.blueprints.distinct("discipline")}
            wanted = " ".join(discipline.lower().split())
            if known and wanted not in known:
                return ToolResult.fail(
                    ErrorCode.INVALID_ARGUMENT,
                    f"No sheets of discipline {discipline!r} are indexed.",
                    suggestion="Use one of: "
                    + ", ".join(sorted(known.values()))
                    + ", or leave discipline out.",
                )
            discipline = known.get(wanted, discipline)
        filters = SearchFilters(
            project=self.catalog.resolve(project) if project else None,
            discipline=discipline or None,
            start_date=start_date,
            end_date=end_date,
        )
        k = self.top_k * 3 if (start_date or end_date) else self.top_k
        hits = self.blueprints.search(description or "drawing sheet", k=k, filters=filters)
        if not hits:
            return ToolResult.ok(
                [], suggestion="No sheet matched; widen the date range or drop the project."
            )
        data = [
            {
                "sheet": h.sheet,
                "title": h.title,
                "discipline": h.discipline,
                "project": h.project,
                "revision": h.extra.get("revision", ""),
                "revision_date": h.date,
                "file": h.source,
                "score": h.score,
            }
            for h in hits
        ]
        return ToolResult.ok(data, sources=[_source(h, f"sheet {h.sheet}") for h in hits])

    def get_project_schedule(self, project: str, milestone: str | None = None) -> ToolResult:
        """Get the milestone schedule of one project: each milestone with planned start,
        planned finish, actual finish, status and who is responsible.

        Use it for questions about when something is planned or was finished, what is late or
        in progress, and the substantial completion date. Returns milestones in planned order;
        pass milestone to get only the one asked about. It does not return costs, drawings or
        documents.

        Args:
            project: The project, by code (GRB-107) or name (Summit Ridge Hotel).
            milestone: Part of one milestone's name (substantial completion, roofing), to
                get only the milestones named most like it. Leave it out for the whole
                schedule.
        """
        code = self.catalog.resolve(project)
        hits = self.schedules.rows(SearchFilters(project=code))
        if not hits:
            return ToolResult.fail(
                ErrorCode.NOT_FOUND,
                f"No schedule is indexed for project {code}.",
                suggestion="Check the project, or add data/schedules/<code>.csv and re-index.",
            )
        hits.sort(key=lambda h: (h.extra.get("planned_start", ""), h.doc_id))
        suggestion = None
        if milestone and milestone.strip():
            best = best_named(hits, milestone)
            if best:
                hits = best
            else:
                suggestion = f"No milestone is named like {milestone!r}: the whole schedule."
        data = {
            "project": code,
            "project_name": self.catalog.name_of(code),
            "milestones": [
                {
                    "id": h.doc_id,
                    "milestone": h.title,
                    "summary": milestone_summary(h.title, h.extra),
                    **{
                        k: h.extra.get(k, "")
                        for k in (
                            "planned_start",
                            "planned_finish",
                            "actual_finish",
                            "status",
                            "responsible",
                        )
                    },
                }
                for h in hits
            ],
        }
        # The schedule is the evidence: one source for the file, its milestones by range.
        first, last = hits[0].doc_id, hits[-1].doc_id
        whole = Source(
            file=hits[0].source,
            doc_id=code,
            title=f"Milestone schedule of {code}",
            locator=f"milestone {first}"
            if first == last
            else f"{len(hits)} milestones, {first} to {last}",
        )
        return ToolResult.ok(data, sources=[whole], suggestion=suggestion)
