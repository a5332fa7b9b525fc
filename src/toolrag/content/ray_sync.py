"""Reading, chunking and embedding content files on a Ray cluster (``toolrag index --engine
ray``).

:func:`ray_build_rows` returns a ``build_rows`` for :meth:`ContentIndex.sync
<toolrag.content.index.ContentIndex.sync>`: the changed files go to a pool of Ray Data actors
(``map_batches`` with an ``ActorPoolStrategy``), each holding a copy of the index's reading
code and one embedding model, and each file comes back as its rows. The driver writes them to
the same LanceDB table with the same stable ids, so a local sync afterwards finds nothing to
do. The files must be readable at the same paths from every node (a shared folder).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toolrag.content.index import BuildRows, ContentIndex, FileRows
from toolrag.content.records import Loader
from toolrag.models.ray_pool import connect_ray
from toolrag.settings import Settings


class _FileReader:
    """A Ray Data actor: the index's reading code and an embedding model, built once."""

    def __init__(self, index: ContentIndex, loader: Loader, settings: Settings) -> None:
        from toolrag.models.embeddings import make_embedding

        self.index = index
        self.index.embed = make_embedding(settings)
        self.loader = loader

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        out = []
        for source, path, digest in zip(batch["source"], batch["path"], batch["digest"],
                                        strict=True):  # fmt: skip
            built = self.index.file_rows(str(source), Path(str(path)), str(digest), self.loader)
            out.append(json.dumps(built.__dict__))
        return {"built": out}


def ray_build_rows(
    index: ContentIndex,
    settings: Settings,
    actors: int = 2,
    address: str | None = None,
    cpus_per_actor: float = 1.0,
    echo: Callable[[str], None] | None = None,
) -> BuildRows:
    """A ``build_rows`` for ``index.sync`` that reads, chunks and embeds on Ray: ``actors``
    actors, each with the settings' embedding model."""

    def build_rows(todo: Sequence[tuple[str, Path, str]], loader: Loader) -> Iterator[FileRows]:
        if not todo:
            return
        ray = connect_ray(address, echo=echo)
        items = [{"source": s, "path": str(p), "digest": d} for s, p, d in todo]
        ds = ray.data.from_items(items, override_num_blocks=min(len(items), 4 * max(actors, 1)))
        out = ds.map_batches(
            _FileReader,
            fn_constructor_kwargs={"index": index, "loader": loader, "settings": settings},
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=max(1, actors)),
            num_cpus=cpus_per_actor,
        )
        for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
            for text in batch["built"]:
                yield FileRows(**json.loads(str(text)))

    return build_rows


__all__ = ["ray_build_rows"]
