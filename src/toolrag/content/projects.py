"""Project catalog: resolves what a person or a model calls a project to its project code."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import yaml
from pydantic import BaseModel

from toolrag.content.aliases import KeywordValues
from toolrag.errors import InputError
from toolrag.text import MAX_QUERY_CHARS, bounded


class Project(BaseModel):
    code: str
    name: str = ""

    @property
    def label(self) -> str:
        """How an error names the project: "GRB-104 (Cedar Valley Fire Station 7)"."""
        return f"{self.code} ({self.name})" if self.name else self.code


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


class ProjectCatalog(BaseModel):
    """Known projects, from a YAML file with a ``projects`` list or from indexed metadata."""

    projects: list[Project] = []

    @classmethod
    def load(cls, path: Path, extra_codes: list[str] | None = None) -> ProjectCatalog:
        projects: list[Project] = []
        if path.is_file():
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
            for item in data.get("projects", []) if isinstance(data, dict) else []:
                if isinstance(item, dict) and item.get("code"):
                    projects.append(Project(code=str(item["code"]), name=str(item.get("name", ""))))
        known = {p.code for p in projects}
        projects += [Project(code=c) for c in extra_codes or [] if c and c not in known]
        return cls(projects=projects)

    def aliases(self) -> dict[str, list[str]]:
        """Each project's code with the words that name it in a question: its code, its name,
        and each two-word run of its name that no other project's name holds ("Summit
        Ridge" for the Summit Ridge Hotel, not "Office Building" when two names hold it)."""
        names = {p.code: [p.name] if p.name else [] for p in self.projects}
        return KeywordValues(list(names), names).question_names()

    def name_of(self, code: str) -> str:
        return next((p.name for p in self.projects if p.code == code), "")

    def resolve(self, value: str) -> str:
        """The project code for a code, a name or a close paraphrase of a name.

        Raises :class:`InputError` naming the closest known projects when nothing fits.
        A value is read up to ``MAX_QUERY_CHARS`` characters (:mod:`toolrag.text`).
        """
        value = bounded(value, MAX_QUERY_CHARS)
        wanted = _norm(value)
        if not wanted:
            raise InputError("The project is empty.", hint="Give a project code or name.")
        for p in self.projects:
            if wanted in (_norm(p.code), _norm(p.name)):
                return p.code
        # A name fragment that identifies exactly one project ("summit ridge", "hotel").
        matches = [p for p in self.projects if p.name and wanted in _norm(p.name)]
        if len(matches) == 1:
            return matches[0].code
        # Some of the name's words, in any order ("Cedar Valley 7", "station 7 cedar valley",
        # or what is left of a name written half in another script: "Cedar Valley 7号消防站"),
        # when they fit exactly one project.
        words = set(wanted.split())
        matches = [p for p in self.projects if p.name and words <= set(_norm(p.name).split())]
        if len(matches) == 1:
            return matches[0].code
        # A code embedded in a longer string ("project GRB-107 hotel").
        for p in self.projects:
            if _norm(p.code) in wanted:
                return p.code
        if len(matches) > 1:  # words several names share: ask, rather than guess one
            raise InputError(
                f"Several projects fit {value!r}.",
                hint="Say which: " + ", ".join(p.label for p in matches) + ".",
            )
        names = {_norm(p.name): p.code for p in self.projects if p.name}
        close = difflib.get_close_matches(wanted, list(names), n=1, cutoff=0.75)
        if close:
            return names[close[0]]
        raise InputError(
            f"Unknown project {value!r}.",
            hint="Known projects: " + self.describe_closest(value) + ".",
        )

    def describe_closest(self, value: str, n: int = 12) -> str:
        """The known projects closest to ``value`` first, as "code (name)": all of them in a
        catalog of up to ``n`` (a model that guessed a code still finds the project by its
        name), else the ``n`` closest and how many more there are."""
        labels = [p.label for p in self.projects]
        wanted = _norm(bounded(value, MAX_QUERY_CHARS))
        ranked = sorted(
            labels,
            key=lambda label: -difflib.SequenceMatcher(None, wanted, _norm(label)).ratio(),
        )
        if not ranked:
            return "none indexed yet"
        more = f" and {len(ranked) - n} more" if len(ranked) > n else ""
        return ", ".join(ranked[:n]) + more
