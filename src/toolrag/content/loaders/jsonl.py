"""Documents from one JSONL file (``{id, title?, text, metadata?}`` per line), the evaluation
format of docs/contracts.md: each line becomes a record of the ``documents`` content type and goes
through the same chunking, embedding and hybrid search as the sample documents."""

from __future__ import annotations

import json
from pathlib import Path

from toolrag.content.loaders.base import Loader, Record
from toolrag.errors import IngestError

_FIELDS = ("project", "project_name", "doc_type", "date", "sheet", "discipline")


class JsonlDocumentLoader(Loader):
    content_type = "documents"
    chunked = True

    def __init__(self, path: Path) -> None:
        super().__init__(path.parent)
        self.path = path

    def files(self) -> list[Path]:
        return [self.path] if self.path.is_file() else []

    def load(self, path: Path) -> list[Record]:
        records: list[Record] = []
        seen: set[str] = set()
        for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                doc_id, text = str(item["id"]), str(item["text"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise IngestError(
                    f"{path}:{n}: not a document line ({exc.__class__.__name__}: {exc}).",
                    hint="Each line needs a JSON object with id and text (title, metadata "
                    "optional).",
                ) from exc
            if doc_id in seen:
                raise IngestError(
                    f"{path}:{n}: the id {doc_id!r} appears twice.",
                    hint="Give every document its own id.",
                )
            seen.add(doc_id)
            meta = item.get("metadata") or {}
            meta = meta if isinstance(meta, dict) else {}
            title = str(item.get("title") or "")
            records.append(
                Record(
                    doc_id=doc_id,
                    text=f"{title}\n\n{text}".strip() if title else text,
                    title=title,
                    extra={str(k): str(v) for k, v in meta.items() if k not in _FIELDS},
                    **{k: str(meta[k]) for k in _FIELDS if k in meta},
                )
            )
        return records
