"""The tools of a declared collection: ``search_<name>`` with typed filters generated from its
fields, and ``ask_<name>``, a ``QueryEngineTool`` that answers from its passages.

The search tool's parameters come from the collection's filter fields:

- ``enum``: the values seen at index time, listed in the schema (up to ``MAX_ENUM``; more are
  taken as a keyword);
- ``keyword``: free text resolved against the seen values and the alias file's names, with
  the closest values suggested when none fits;
- ``date``: ``start_<field>`` and ``end_<field>`` (``start_date``/``end_date`` for a field
  named ``date``), inclusive, YYYY-MM-DD;
- ``number``: ``min_<field>`` and ``max_<field>``, inclusive.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, Field, create_model

from toolrag.content.aliases import KeywordValues, load_aliases, name_words
from toolrag.content.collection_index import CollectionIndex, FieldFilters
from toolrag.content.collection_spec import CollectionSpec, FieldSpec
from toolrag.content.fields import FieldValueError, coerce
from toolrag.content.index import Hit
from toolrag.text import bounded
from toolrag.tools.base import validated_call
from toolrag.tools.result import ErrorCode, Source, ToolResult

MAX_ENUM = 30
LIST_FACTOR = 3  # a filtered search returns up to this many times top_k matches
MORE_CHARS = 300  # of the text of each match past top_k
MAX_LISTED = 30  # units a call with filters and no query lists
TOPIC_CHARS = 60  # of each document title a description names (``topics``)
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "in",
        "at",
        "on",
        "to",
        "and",
        "or",
        "all",
        "any",
        "every",
        "with",
        "by",
    ]
)


def _parameters(field: FieldSpec) -> list[str]:
    if field.type == "date":
        base = "" if field.name == "date" else f"_{field.name}"
        return [f"start{base or '_date'}", f"end{base or '_date'}"]
    if field.type == "number":
        return [f"min_{field.name}", f"max_{field.name}"]
    return [field.name]


class CollectionSearch:
    """``search_<name>(query, <filters>)`` over one collection's index."""

    def __init__(
        self,
        index: CollectionIndex,
        top_k: int = 3,
        aliases: dict[str, dict[str, list[str]]] | None = None,
    ) -> None:
        """``aliases``: per keyword field, each value's other names."""
        self.index = index
        self.spec: CollectionSpec = index.spec
        self.top_k = top_k
        self.filters = [self.spec.field(name) for name in self.spec.filters]
        self.keywords: dict[str, KeywordValues] = {}
        self.enums: dict[str, list[str]] = {}
        exists = index.exists()
        for f in self.filters:
            if f.type not in ("keyword", "enum"):
                continue
            seen = index.seen(f.name) if exists else []
            if f.type == "enum" and 0 < len(seen) <= MAX_ENUM:
                self.enums[f.name] = seen
            else:
                self.keywords[f.name] = KeywordValues(seen, (aliases or {}).get(f.name))

    # --- the schema and the card --------------------------------------------------------------
    def schema(self) -> type[BaseModel]:
        fields: dict[str, Any] = {
            "query": (
                str | None,
                Field(
                    None,
                    description="What to look for, in the words of the question. Leave it "
                    "out to list everything the filters match.",
                ),
            ),
        }
        for f in self.filters:
            about = f.description or f.name.replace("_", " ")
            if f.type == "date":
                start, end = _parameters(f)
                fields[start] = (
                    dt.date | None,
                    Field(None, description=f"Earliest {about}, YYYY-MM-DD (inclusive)."),
                )
                fields[end] = (
                    dt.date | None,
                    Field(None, description=f"Latest {about}, YYYY-MM-DD (inclusive)."),
                )
            elif f.type == "number":
                low, high = _parameters(f)
                fields[low] = (float | None, Field(None, description=f"Smallest {about}."))
                fields[high] = (float | None, Field(None, description=f"Largest {about}."))
            elif f.name in self.enums:
                allowed = tuple(self.enums[f.name])
                fields[f.name] = (
                    Literal[allowed] | None,
                    Field(None, description=f"Only this {about}."),
                )
            else:
                fields[f.name] = (
                    str | None,
                    Field(None, description=f"Only this {about} (a value or a name for it)."),
                )
        model: type[BaseModel] = create_model(f"{self.spec.tool_name}_args", **fields)
        return model

    def description(self) -> str:
        spec = self.spec
        about = spec.description.strip().rstrip(".")
        shown = [f.name.replace("_", " ") for f in spec.fields]
        filters = ", ".join(p for f in self.filters for p in _parameters(f))
        text = f"Search {spec.name.replace('_', ' ')}: {about}. "
        text += "Use it for facts written in these files"
        text += f", filtered by {filters}. " if filters else ". "
        text += "Returns the most relevant passages with their title"
        text += (", " + ", ".join(shown)) if shown else ""
        text += " and file. It does not search other collections and does not compute totals."
        return text + self._topics()

    def _topics(self) -> str:
        """The sentence that names the ``topics`` setting's number of document titles, each
        cut to a few words (" Its files include: A; B; C (and N more)."); "" when the setting
        is 0 or nothing is indexed."""
        if not self.spec.topics or not self.index.exists():
            return ""
        titles, total = self.index.titles(self.spec.topics)
        if not titles:
            return ""
        named = "; ".join(bounded(t, TOPIC_CHARS) for t in titles)
        more = f" (and {total - len(titles)} more)" if total > len(titles) else ""
        return f" Its files include: {named}{more}."

    def examples(self) -> list[str]:
        """The declared example requests, else requests about what the index holds (its
        titles and headings), so that ``toolrag tools lint`` and the ToolIndex have some."""
        if self.spec.examples:
            return list(self.spec.examples)
        titles = self.index.outline(limit=40) if self.index.exists() else []
        name = self.spec.name.replace("_", " ")
        forms = ("What do the {n} say about {t}?", "Find {t} in the {n}", "Look up {t}")
        return [forms[i % len(forms)].format(n=name, t=t.lower()) for i, t in enumerate(titles[:6])]

    def qa_description(self) -> str:
        """The card text of the collection's ``ask_<name>`` QueryEngineTool."""
        about = self.spec.description.strip().rstrip(".")
        return (
            f"Answer a question from the {self.spec.name.replace('_', ' ')} ({about}) with a "
            "short synthesized answer. Use it for open questions over these files when no "
            "filter is needed. Returns an answer with the passages it used. It does not "
            f"filter; use {self.spec.tool_name} for that."
        )

    def tool(self) -> FunctionTool:
        """The search as a LlamaIndex tool whose arguments are checked against its schema
        (an unknown argument or a value outside an enum is a structured error naming the
        real ones)."""
        schema = self.schema()
        return FunctionTool.from_defaults(
            fn=validated_call(self.spec.tool_name, self.search, schema),
            name=self.spec.tool_name,
            description=self.description(),
            fn_schema=schema,
        )

    # --- the call -----------------------------------------------------------------------------
    def search(self, query: str | None = None, **filters: Any) -> ToolResult:
        notes: list[str] = []
        built = self._filters(filters, notes)
        if isinstance(built, ToolResult):
            return built
        filtered = bool(built.equals or built.ranges)
        dropped = list(notes)  # the keyword filters that named nothing indexed
        if dropped and (filtered or (query and query.strip())):
            notes[-1] += " The search ran without that filter."
        if query and filtered and self._repeats_filters(query, filters, built):
            notes.append("The query only repeated the filters: this lists what they match.")
            query = None
        if not query or not query.strip():
            if not filtered:
                # a keyword filter that names nothing indexed left nothing to list by
                return ToolResult.fail(
                    ErrorCode.INVALID_ARGUMENT,
                    " ".join(dropped) or "The query is empty and no filter is given.",
                    suggestion="Give one of the closest values, or describe what to look for."
                    if dropped
                    else "Describe what to look for in a few words, or give a filter to list "
                    "what it matches.",
                )
            # no query: each unit the filters match (its first chunk), in the files' order
            firsts: dict[str, Hit] = {}
            for row in self.index.rows(built, limit=MAX_LISTED * 20):
                firsts.setdefault(row.doc_id, row)
            hits = list(firsts.values())
            if len(hits) > MAX_LISTED:
                hits = hits[:MAX_LISTED]
                notes.append(f"The first {MAX_LISTED} matches; add a query or a filter.")
            shown = 0
        else:
            # a filtered search lists: more matches, those past top_k with less of their text
            k = self.top_k * LIST_FACTOR if filtered else self.top_k
            hits = self.index.search(bounded(query, 2_000), k=k, filters=built)
            shown = self.top_k
        note = " ".join(notes) or None
        if not hits:
            return ToolResult.ok(
                [], suggestion=note or "No passage matched; drop a filter or reword."
            )
        data = [self._shown(h, full=i < shown) for i, h in enumerate(hits)]
        sources = [
            Source(
                file=h.source,
                doc_id=h.doc_id,
                title=h.title,
                locator=self._locator(h),
                score=h.score,
            )
            for h in hits
        ]
        return ToolResult.ok(data, sources=sources, suggestion=note)

    def _repeats_filters(self, query: str, given: dict[str, Any], built: FieldFilters) -> bool:
        """Whether ``query`` says nothing the filters do not: its words are the filter values
        (as given, as resolved, or another name of them), the collection's name and a few
        function words ("P-9" with ``site=P-9``). Ranking by such a query orders a
        listing by noise and cuts it to a few matches; listing shows every match."""
        said: set[str] = set(FUNCTION_WORDS)
        name = name_words(self.spec.name)
        said |= name | {w.removesuffix("s") for w in name}
        for value in [*map(str, given.values()), *built.equals.values()]:
            said |= name_words(value)
        for field, value in built.equals.items():
            known = self.keywords.get(field)
            for other in known.names.get(value, []) if known else []:
                said |= name_words(other)
        words = name_words(bounded(query, 2_000))
        return bool(words) and words <= said

    def _locator(self, hit: Hit) -> str:
        """Where in its file a match is: its ``id_field`` value, else its id when a unit is
        a row or a page kept whole, else its chunk."""
        spec = self.spec
        if spec.id_field and hit.extra.get(spec.id_field):
            return hit.extra[spec.id_field]
        if spec.chunking.size == 0 and hit.doc_id != hit.source:
            return hit.doc_id
        return f"chunk {hit.chunk}"

    def _shown(self, hit: Hit, full: bool) -> dict[str, Any]:
        """One match as the model reads it, what names it first: its ``id_field`` value (or
        its id, unless that is the file), title, the other fields (but the one that is its
        title), file and text (``passage_chars`` of it for the first ``top_k``, less for the
        rest of a list). A small model answers with the first values of a row: a sheet's
        number, not its title. The search score is left to the result's sources: the rows
        come in its order, and a small model reads "score": 0.0041 as data."""
        spec = self.spec
        limit = spec.passage_chars if full else min(MORE_CHARS, spec.passage_chars)
        row: dict[str, Any] = {}
        if spec.id_field and spec.id_field in hit.extra:
            row[spec.id_field] = hit.extra[spec.id_field]
        elif hit.doc_id != hit.source:
            row["doc_id"] = hit.doc_id
        row["title"] = hit.title
        row |= {k: v for k, v in hit.extra.items() if k not in (spec.title_field, spec.id_field)}
        row["file"] = hit.source  # its search score is in the sources, not for the model
        if limit:
            row["text"] = self._unshown(hit.text)[:limit]
        return row

    def _unshown(self, text: str) -> str:
        """A row's text without its ``column: value`` lines that the result shows already
        (a field read from that column, the id and title columns): a ``rows`` unit's text
        repeats its columns, and a listing of twice the size gets cut before its last rows."""
        spec = self.spec
        if spec.reader != "rows" or spec.text_columns:
            return text
        shown = {f.argument for f in spec.fields if f.kind == "column"}
        shown |= {c for c in (spec.id_column, spec.title_column) if c}
        return "\n".join(line for line in text.splitlines() if line.partition(": ")[0] not in shown)

    def _filters(self, given: dict[str, Any], notes: list[str]) -> FieldFilters | ToolResult:
        """The filters to search with, or the failure to return. A keyword value that names
        nothing indexed is left out, with a note in ``notes`` naming the closest values: a
        small model often turns a word of the question into a filter, and a search without
        it still finds the passage."""
        out = FieldFilters()
        for f in self.filters:
            if f.type in ("date", "number"):
                low_name, high_name = _parameters(f)
                low, high = given.get(low_name), given.get(high_name)
                try:
                    low = coerce(f, low) if low is not None else None
                    high = coerce(f, high) if high is not None else None
                except FieldValueError as exc:
                    return ToolResult.fail(
                        ErrorCode.INVALID_ARGUMENT,
                        f"{f.name}: {exc}.",
                        suggestion="Give dates as YYYY-MM-DD and numbers as digits.",
                    )
                if low is not None and high is not None and low > high:  # type: ignore[operator]
                    return ToolResult.fail(
                        ErrorCode.INVALID_ARGUMENT,
                        f"{low_name} {low} is after {high_name} {high}.",
                        suggestion=f"Swap them so that {low_name} <= {high_name}.",
                    )
                if low is not None or high is not None:
                    out.ranges[f.name] = (low, high)
                continue
            value = given.get(f.name)
            if value is None or not str(value).strip():
                continue
            if f.name in self.enums:
                allowed = {v.lower(): v for v in self.enums[f.name]}
                if str(value).lower() not in allowed:
                    return ToolResult.fail(
                        ErrorCode.INVALID_ARGUMENT,
                        f"{f.name} {bounded(str(value), 80)!r} is not one of the indexed values.",
                        suggestion=f"Use one of: {', '.join(self.enums[f.name])}; or leave "
                        f"{f.name} out.",
                    )
                out.equals[f.name] = allowed[str(value).lower()]
                continue
            known = self.keywords[f.name]
            resolved = known.resolve(str(value))
            if resolved is None and known.names:
                notes.append(
                    f"No {f.name} {bounded(str(value), 80)!r} is indexed in {self.spec.name} "
                    f"(closest {f.name}: " + "; ".join(known.closest(str(value), n=3)) + ")."
                )
                continue
            out.equals[f.name] = resolved or str(value)
        return out


def collection_tools(
    index: CollectionIndex, top_k: int = 3, toolspecs_dir: Path | None = None
) -> list[FunctionTool]:
    """The search tool of one collection (its alias files read from ``toolspecs_dir``)."""
    return [collection_search(index, top_k, toolspecs_dir).tool()]


def collection_search(
    index: CollectionIndex, top_k: int = 3, toolspecs_dir: Path | None = None
) -> CollectionSearch:
    """The :class:`CollectionSearch` of one collection, with its fields' alias files."""
    aliases = {}
    for f in index.spec.fields:
        if (path := f.alias_file(toolspecs_dir)) is not None:
            aliases[f.name] = load_aliases(path)
    return CollectionSearch(index, top_k=top_k, aliases=aliases)
