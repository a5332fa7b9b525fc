"""Text documents: Markdown files with a YAML front matter (id, title, project, type, date)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

from toolrag.content.loaders.base import Loader, Record
from toolrag.errors import IngestError

DOCUMENT_TYPES = (
    "contract",
    "proposal",
    "bid",
    "change_order",
    "rfi",
    "specification",
    "meeting_minutes",
)


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """Split ``---\\nyaml\\n---\\nbody``; a file without front matter has empty metadata."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    meta = yaml.safe_load(text[3:end]) or {}
    if not isinstance(meta, dict):
        raise ValueError("front matter is not a mapping")
    return meta, text[end + 4 :].lstrip("\n")


class DocumentLoader(Loader):
    content_type = "documents"
    chunked = True
    suffixes = (".md", ".markdown", ".txt")

    def files(self) -> list[Path]:
        base = self.root / "documents"
        if not base.is_dir():
            return []
        return sorted(p for p in base.rglob("*") if p.suffix.lower() in self.suffixes)

    def load(self, path: Path) -> list[Record]:
        try:
            meta, body = split_front_matter(path.read_text(encoding="utf-8-sig"))
        except (UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
            raise IngestError(
                f"{path}: unreadable document ({exc.__class__.__name__}: {exc}).",
                hint="Fix the file's UTF-8 text or YAML front matter, then run `toolrag index`.",
            ) from exc
        date = meta.get("date", "")
        if isinstance(date, dt.date):
            date = date.isoformat()
        parties = meta.get("parties") or []
        if not isinstance(parties, list):
            parties = [parties]
        title = str(meta.get("title") or path.stem)
        return [
            Record(
                doc_id=str(meta.get("id") or path.stem),
                text=f"{title}\n\n{body}".strip(),
                title=title,
                project=str(meta.get("project") or ""),
                doc_type=str(meta.get("document_type") or ""),
                date=str(date or ""),
                extra={"parties": "; ".join(map(str, parties))} if parties else {},
            )
        ]
