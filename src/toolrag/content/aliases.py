"""The values of a keyword field and the other names each goes by (an alias file).

A keyword value is named many ways: a code and its names (``CUST-107``, "Copperfield Books"),
or a code read by OCR with stray spaces (``CUST-1 07``). :class:`KeywordValues` resolves what a
file or a tool call gives to one indexed value; :func:`load_aliases` reads an alias file.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import yaml

from toolrag.errors import ConfigError
from toolrag.text import bounded


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def name_words(text: str) -> set[str]:
    """The words of a name or value as they are compared: lower case, letters and digits."""
    return set(_norm(text).split())


class KeywordValues:
    """The values of a keyword field and the other names each goes by."""

    def __init__(self, values: list[str], aliases: dict[str, list[str]] | None = None) -> None:
        self.names: dict[str, list[str]] = {v: [v] for v in values}
        for value, names in (aliases or {}).items():
            self.names.setdefault(value, [value]).extend(names)

    def resolve(self, given: str) -> str | None:
        """The value ``given`` names: exactly (any case and punctuation), then as the only
        value that is the same with spaces left out (``CUST-1 07`` as OCR reads ``CUST-107``),
        the only value whose name holds it or holds all its words ("copperfield", "pharmacy
        7 elm street"), the only value named inside it ("the CUST-104 account"), else the one
        name spelled closest to it ("Copperfeild Books" for "Copperfield Books"); None when
        none fits, or when a step finds several."""
        wanted = _norm(bounded(given, 200))
        if not wanted:
            return None
        for value, names in self.names.items():
            if any(_norm(n) == wanted for n in names):
                return value
        words = set(wanted.split())
        compact = wanted.replace(" ", "")
        padded = f" {wanted} "
        for test in (
            lambda n: _norm(n).replace(" ", "") == compact,
            lambda n: wanted in _norm(n),
            lambda n: words <= set(_norm(n).split()),
            lambda n: bool(_norm(n)) and f" {_norm(n)} " in padded,
        ):
            hits = {v for v, names in self.names.items() if any(test(n) for n in names)}
            if len(hits) == 1:
                return hits.pop()
            if hits:  # words several values share: none is chosen
                return None
        by_name = {_norm(n): v for v, names in self.names.items() for n in names[1:] if _norm(n)}
        close = difflib.get_close_matches(wanted, list(by_name), n=1, cutoff=0.75)
        return by_name[close[0]] if close else None

    def question_names(self) -> dict[str, list[str]]:
        """Each value with the words that name it in a question: its names, and each
        two-word run of its other names that no other value's names hold ("Fernwood Garden" for
        the Fernwood Garden Center; not "Coffee Roasters" when two names hold it)."""

        def pairs(names: list[str]) -> set[str]:
            out: set[str] = set()
            for name in names[1:]:  # names[0] is the value itself
                words = _norm(name).split()
                out |= {" ".join(words[i : i + 2]) for i in range(len(words) - 1)}
            return out

        counts: dict[str, int] = {}
        for names in self.names.values():
            for pair in pairs(names):
                counts[pair] = counts.get(pair, 0) + 1
        return {
            value: [*dict.fromkeys(names), *sorted(x for x in pairs(names) if counts[x] == 1)]
            for value, names in self.names.items()
        }

    def closest(self, given: str, n: int = 5) -> list[str]:
        wanted = _norm(bounded(given, 200))
        labels = {value: " / ".join(dict.fromkeys(names)) for value, names in self.names.items()}
        ranked = sorted(
            labels.items(),
            key=lambda kv: (
                -max(
                    difflib.SequenceMatcher(None, wanted, _norm(x)).ratio()
                    for x in self.names[kv[0]]
                )
            ),
        )
        return [label for _, label in ranked[:n]]


def load_aliases(path: Path) -> dict[str, list[str]]:
    """An alias file: ``{values: [{value: V, names: [N, ...]}]}``, or the sample's
    ``{projects: [{code: V, name: N}]}``."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"The alias file {path} cannot be read: {exc}",
            hint="Fix the file or the collection's aliases.",
        ) from exc
    out: dict[str, list[str]] = {}
    for item in data.get("values") or []:
        if isinstance(item, dict) and item.get("value"):
            out[str(item["value"])] = [str(n) for n in item.get("names") or []]
    for item in data.get("projects") or []:
        if isinstance(item, dict) and item.get("code"):
            out[str(item["code"])] = [str(item["name"])] if item.get("name") else []
    return out
