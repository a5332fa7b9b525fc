"""Project schedules: one CSV of milestones per project, one record per milestone."""

from __future__ import annotations

import csv
from pathlib import Path

from toolrag.content.loaders.base import Loader, Record
from toolrag.errors import IngestError

REQUIRED = ("project", "milestone_id", "milestone", "planned_start", "planned_finish", "status")


class ScheduleLoader(Loader):
    content_type = "schedules"

    def files(self) -> list[Path]:
        base = self.root / "schedules"
        return sorted(base.glob("*.csv")) if base.is_dir() else []

    def load(self, path: Path) -> list[Record]:
        try:
            with path.open(newline="", encoding="utf-8-sig") as fh:
                rows = list(csv.DictReader(fh))
        except (UnicodeDecodeError, csv.Error) as exc:
            raise IngestError(
                f"{path}: unreadable schedule CSV ({exc}).",
                hint="Fix the CSV (UTF-8, header row), then run `toolrag index`.",
            ) from exc
        missing = [c for c in REQUIRED if rows and c not in rows[0]]
        if missing:
            raise IngestError(
                f"{path}: schedule CSV lacks columns {missing}.",
                hint=f"A schedule needs the columns {', '.join(REQUIRED)}.",
            )
        records = []
        for row in rows:
            row = {k: (v or "").strip() for k, v in row.items() if k}
            actual = row.get("actual_finish", "")
            text = (
                f"Schedule milestone {row['milestone_id']} for project {row['project']}: "
                f"{row['milestone']}. Planned start {row['planned_start']}, planned finish "
                f"{row['planned_finish']}"
                + (f", actual finish {actual}" if actual else "")
                + f". Status: {row['status']}."
                + (f" Responsible: {row['responsible']}." if row.get("responsible") else "")
            )
            records.append(
                Record(
                    doc_id=row["milestone_id"],
                    text=text,
                    title=row["milestone"],
                    project=row["project"],
                    doc_type="milestone",
                    date=row["planned_finish"],
                    extra={
                        "planned_start": row["planned_start"],
                        "planned_finish": row["planned_finish"],
                        "actual_finish": actual,
                        "status": row["status"],
                        "responsible": row.get("responsible", ""),
                    },
                )
            )
        return records
