"""Collections declared in ``toolspecs/collections.yaml``: a user's own content, as data.

A collection is a set of files (globs), the reader that turns each file into units of text,
how the units are chunked, and the metadata fields read from each file (front matter, a path
pattern, document properties, a CSV or JSON column, a pattern over the text). Fields marked
``filter`` become typed parameters of the collection's generated search tool::

    collections:
      - name: handbooks
        description: The company's staff handbooks and policies.
        paths: ["handbooks/**/*"]
        fields:
          - {name: department, type: keyword, source: "path:{department}/*"}
          - {name: updated, type: date, source: "property:last_modified_date"}
          - {name: audience, type: enum, source: "front_matter:audience"}
        filters: [department, updated, audience]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from toolrag.errors import ConfigError

FieldType = Literal["keyword", "enum", "date", "number"]
ReaderKind = Literal["auto", "rows"]
# How a chunk longer than the embedding model reads is embedded: "cut" (the default) lets the
# model drop what is past its input length; "whole" embeds it as windows and keeps their mean
VectorMode = Literal["cut", "whole"]
DEFAULT_VECTORS: VectorMode = "cut"
SOURCE_KINDS = ("front_matter", "path", "property", "column", "text", "days_between")
# Columns every collection table has: a field may not take one of these names.
RESERVED = frozenset(
    {"id", "source", "source_hash", "doc_id", "title", "text", "chunk", "extra", "vector", "query"}
)
MAX_PATTERN_CHARS = 200


class FieldSpec(BaseModel):
    """One metadata field of a collection's units.

    ``source`` says where the value comes from:

    - ``front_matter:KEY``: a key of a Markdown file's YAML front matter;
    - ``path:PATTERN``: a part of the file's path relative to the data folder, e.g.
      ``path:{customer}/{doc_type}/*.pdf`` (``{name}`` is one path segment, ``*`` any
      segment part, ``**`` any number of segments; the field takes the part named after it);
    - ``property:KEY``: a property the reader sets (a PDF's ``title``, a file's
      ``creation_date``, ``last_modified_date``, ``file_name``, ``page_label``);
    - ``column:NAME``: a CSV column or a JSON key, for ``reader: rows`` collections;
    - ``text:REGEX``: a pattern over the unit's text (an OCR'd form's header); its first
      group, or the whole match, is the value. Patterns are matched line by line;
    - ``days_between:START,END``: a ``number`` field computed from two declared ``date``
      fields, the days from START to END (negative when END comes first), shown in words in a
      result ("6 (actual_finish is 6 days after planned_finish)") so that the model does not
      count days. A unit lacking either date has none.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,30}$")
    type: FieldType = "keyword"
    source: str = Field(
        description="front_matter:KEY, path:PATTERN, property:KEY, column:NAME "
        "or text:REGEX; default front_matter:<name>.",
        default="",
    )
    description: str = Field("", description="What the field means, for the tool's parameter.")
    aliases: str | None = Field(
        None,
        description="keyword: a YAML file of values and their other names, relative to the "
        "toolspecs folder: {values: [{value: CUST-101, names: [Bluebird Coffee Roasters]}]}.",
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED:
            raise ValueError(f"{value!r} is a column every collection has; rename the field")
        return value

    @model_validator(mode="after")
    def _known_source(self) -> FieldSpec:
        if not self.source:
            self.source = f"front_matter:{self.name}"
        kind, sep, arg = self.source.partition(":")
        if not sep or kind not in SOURCE_KINDS or not arg.strip():
            raise ValueError(
                f"field {self.name!r}: source {self.source!r} is not one of "
                + ", ".join(f"{k}:..." for k in SOURCE_KINDS)
            )
        if len(arg) > MAX_PATTERN_CHARS:
            raise ValueError(f"field {self.name!r}: the source is over {MAX_PATTERN_CHARS} chars")
        if kind == "text":
            try:
                re.compile(arg)
            except re.error as exc:
                raise ValueError(f"field {self.name!r}: bad pattern ({exc})") from exc
        if kind == "path" and "{" + self.name + "}" not in arg:
            raise ValueError(f"field {self.name!r}: the path pattern must name {{{self.name}}}")
        if kind == "days_between":
            if self.type != "number":
                raise ValueError(f"field {self.name!r}: a days_between field has type number")
            if len(self.between) != 2 or not all(self.between):
                raise ValueError(
                    f"field {self.name!r}: days_between takes two date fields, START,END"
                )
        return self

    @property
    def between(self) -> tuple[str, ...]:
        """A ``days_between`` field's two date fields (START, END); () for any other."""
        if self.kind != "days_between":
            return ()
        return tuple(part.strip() for part in self.argument.split(","))

    def alias_file(self, toolspecs_dir: Path | None) -> Path | None:
        """The alias file, relative paths taken from ``toolspecs_dir``; None without one."""
        if not self.aliases:
            return None
        path = Path(self.aliases)
        return path if path.is_absolute() or toolspecs_dir is None else toolspecs_dir / path

    @property
    def kind(self) -> str:
        return self.source.partition(":")[0]

    @property
    def argument(self) -> str:
        return self.source.partition(":")[2].strip()


class Chunking(BaseModel):
    """How units are split before embedding (``size`` 0: one vector per unit)."""

    size: int = Field(400, ge=0, le=8192, description="Chunk size in tokens; 0 keeps units whole.")
    overlap: int = Field(40, ge=0, le=1024)
    vectors: VectorMode = Field(
        DEFAULT_VECTORS,
        description="cut: a chunk longer than the embedding model reads (256 word pieces for "
        "the default model, about 190 words) is embedded from its start; whole: as windows "
        "that fit, and their mean (decision 0061: better where questions ask about details "
        "deep in long chunks, not on every corpus; indexing reads every word piece).",
    )


class CollectionSpec(BaseModel):
    """One collection: its files, reader, chunking and metadata fields."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,40}$")
    tool: str | None = Field(
        None,
        pattern=r"^[a-z][a-z0-9_]{0,63}$",
        description="The name of the generated search tool (default search_<name>).",
    )
    description: str = Field(min_length=10, max_length=1000)
    paths: list[str] = Field(min_length=1, description="Globs, relative to the data folder.")
    reader: ReaderKind = Field(
        "auto",
        description="auto: every common format (PDF, DOCX, PPTX, HTML, Markdown, text, CSV, "
        "JSON, EPUB; images through OCR), one unit per file or page; rows: each CSV row or "
        "JSON/JSONL record is one unit.",
    )
    text_columns: list[str] = Field(
        default_factory=list,
        description="rows: the columns whose values, joined, are a unit's text (default: "
        "every column, as 'column: value' lines).",
    )
    id_column: str | None = Field(
        None, description="rows: the column with each unit's id (its doc_id in results)."
    )
    title_column: str | None = Field(None, description="rows: the column with its title.")
    title_field: str | None = Field(
        None,
        description="A declared field whose value is each unit's title (the TITLE line "
        "of an OCR'd form's header); default: the reader's title, else the first line of text.",
    )
    id_field: str | None = Field(
        None,
        description="A declared field whose value names each unit to a person (a form's "
        "number, an order id): it leads each result and is the source's locator.",
    )
    chunking: Chunking = Field(default_factory=Chunking)
    passage_chars: int = Field(
        1200,
        ge=0,
        le=8000,
        description="Characters of each passage's text a search returns (0: none, when the "
        "fields say it all, as a scanned form's do).",
    )
    fields: list[FieldSpec] = Field(default_factory=list)
    filters: list[str] = Field(default_factory=list, description="Fields the tool filters by.")
    examples: list[str] = Field(default_factory=list, description="Example user requests.")
    topics: int = Field(
        0,
        ge=0,
        le=40,
        description="How many of the collection's document titles, spread over it, its search "
        "tool's description names, so that the agent knows what the files are about when the "
        "description does not say (0: none; `toolrag init` writes 12).",
    )

    @model_validator(mode="after")
    def _filters_are_fields(self) -> CollectionSpec:
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"collection {self.name!r}: a field is declared twice")
        unknown = sorted(set(self.filters) - set(names))
        if unknown:
            raise ValueError(
                f"collection {self.name!r}: filters {unknown} are not declared fields {names}"
            )
        dates = {f.name for f in self.fields if f.type == "date"}
        for f in self.fields:
            if f.between and not set(f.between) <= dates:
                raise ValueError(
                    f"collection {self.name!r}: field {f.name!r}: days_between names "
                    f"{', '.join(f.between)}; both must be declared date fields {sorted(dates)}"
                )
        for key in ("title_field", "id_field"):
            value = getattr(self, key)
            if value is not None and value not in names:
                raise ValueError(
                    f"collection {self.name!r}: {key} {value!r} is not a declared field {names}"
                )
        for path in self.paths:
            if len(path) > MAX_PATTERN_CHARS:
                raise ValueError(f"collection {self.name!r}: a path is over 200 characters")
        return self

    @property
    def tool_name(self) -> str:
        return self.tool or f"search_{self.name}"

    @property
    def table(self) -> str:
        return f"collection_{self.name}"

    def field(self, name: str) -> FieldSpec:
        return next(f for f in self.fields if f.name == name)


class CollectionsFile(BaseModel):
    collections: list[CollectionSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> CollectionsFile:
        names = [c.name for c in self.collections]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"collections declared twice: {twice}")
        return self


def load_collections(path: Path) -> list[CollectionSpec]:
    """The collections of a ``collections.yaml``; [] when the file does not exist."""
    if not path.is_file():
        return []
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return CollectionsFile.model_validate(raw).collections
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}", hint="Fix the file.") from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(
            f"{path}: {problems}",
            hint="See docs/collections.md for the fields of a collection.",
        ) from exc
