"""Tool cards: one description of a tool, whatever it came from.

A card is the same object whether it comes from a YAML file in ``toolspecs/``, a LlamaIndex
tool (``BaseToolSpec`` / ``FunctionTool``) or a plain JSON tool list in any of the shapes of
the evaluation files of docs/contracts.md: ``{name, description, parameters}``, OpenAI's
``{type: "function", function: {...}}`` or MCP's ``{name, description, inputSchema}``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from llama_index.core.tools import BaseTool
from pydantic import BaseModel, Field, ValidationError

from toolrag.errors import InputError
from toolrag.types import SideEffect


def split_name(name: str) -> str:
    """``get_projectSchedule.v2`` -> ``get project schedule v2`` (words a query would use)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return " ".join(re.split(r"[\W_]+", spaced)).strip().lower()


# Bumped whenever ``ToolCard.document`` changes, so stored vectors of the old text re-embed.
DOCUMENT_FORMAT = 2
# Allowed values listed per parameter in a card's document (a country list would drown it).
MAX_ENUM_VALUES = 20


def _parameter_lines(properties: Any) -> list[str]:
    """``event type: The type of event. (one of: Music, Theater)`` for each parameter, and for
    the fields of object parameters and of arrays of objects after it."""
    lines: list[str] = []
    if not isinstance(properties, dict):
        return lines
    for key, spec in properties.items():
        spec = spec if isinstance(spec, dict) else {}
        raw_items = spec.get("items")
        items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
        text = split_name(str(key)) or str(key)
        description = str(spec.get("description") or "").strip()
        if description:
            text += f": {description}"
        allowed = spec.get("enum") or items.get("enum")
        if isinstance(allowed, list) and allowed:
            text += " (one of: " + ", ".join(map(str, allowed[:MAX_ENUM_VALUES])) + ")"
        lines.append(text)
        lines.extend(_parameter_lines(spec.get("properties") or items.get("properties")))
    return lines


class ToolCard(BaseModel):
    """The contract of one tool: what it does, its parameters, examples and side effects."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    examples: list[str] = Field(default_factory=list, description="Example user requests.")
    synthetic: list[str] = Field(
        default_factory=list,
        description="LLM-written requests (toolrag.cards.synthetic): indexed for retrieval only, "
        "one "
        "vector each beside the document (not in it), never used as router examples or counted "
        "by lint.",
    )
    side_effect: SideEffect = "read"
    version: str = "1"
    deprecated_by: str | None = None
    tags: list[str] = Field(default_factory=list)
    pinned: bool = Field(False, description="Always offered, whatever the question.")
    companion: bool = Field(
        False,
        description="A helper used beside other tools (arithmetic over what they returned): "
        "offered in addition to the retrieved tools when it ranks among them, never in the "
        "place of one.",
    )
    holds: list[str] = Field(
        default_factory=list,
        description="What the tool's data holds (its documents' titles and section headings), "
        "for a tool that searches content: a question about the contents finds the tool by "
        "these words. Filled from the content index, not written by hand.",
    )
    timeout_s: float | None = Field(
        None, gt=0, description="Seconds a call may take (default: the tool_timeout_s setting)."
    )
    sensitive: list[str] = Field(
        default_factory=list, description="Argument names the audit log masks whole."
    )

    @property
    def id(self) -> str:
        """Stable id: name plus version (never ``hash()``, which changes per process)."""
        return f"{self.name}@{self.version}"

    def parameter_items(self) -> list[tuple[str, str]]:
        props = self.parameters.get("properties") or {}
        return [
            (k, str((v or {}).get("description", "")) if isinstance(v, dict) else "")
            for k, v in props.items()
        ]

    def document(self) -> str:
        """The enriched text a tool is retrieved by: the name in words, the description, the
        parameters (names in words, descriptions, allowed values, nested fields), the example
        queries, the tags and what the tool's data holds. LLM-written requests stay out of it:
        pasted in, they blur the description (BFCL R@1 0.665 -> 0.622); the ToolIndex gives
        each its own vector."""
        lines = [f"{split_name(self.name)} ({self.name})", self.description.strip()]
        params = _parameter_lines(self.parameters.get("properties"))
        if params:
            lines.append("Parameters: " + "; ".join(params))
        if self.examples:
            lines.append("Examples: " + " | ".join(self.examples))
        if self.tags:
            lines.append("Tags: " + ", ".join(self.tags))
        if self.holds:  # last: the embedding model reads the first 256 tokens, BM25 all of it
            lines.append("Holds: " + "; ".join(self.holds))
        return "\n".join(x for x in lines if x)

    def content_hash(self) -> str:
        """The card's version as the document and lint read it: execution limits (timeout,
        sensitive) and LLM-written requests (``requests_hash``) do not re-embed the document."""
        fields = self.model_dump(mode="json", exclude={"timeout_s", "sensitive", "synthetic"})
        if not self.holds:  # cards of tools without content keep the hash they had before it
            del fields["holds"]
        payload = json.dumps([DOCUMENT_FORMAT, fields], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def requests_hash(self) -> str:
        """The version of the card's LLM-written requests (and of the card they were written
        for): their vectors are embedded again when it changes."""
        payload = json.dumps([self.content_hash(), self.synthetic])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


# Keys under which a tool file may wrap its list: MCP's tools/list result ({"tools": [...]})
# and OpenAI's legacy {"functions": [...]}.
_LIST_KEYS = ("tools", "functions")
# Other names of the parameters' JSON Schema: MCP's inputSchema, Anthropic's input_schema.
_SCHEMA_KEYS = ("inputSchema", "input_schema")


def card_from_dict(item: Any) -> ToolCard:
    """Any JSON tool shape (plus card fields) -> a card: ``{name, description, parameters}``,
    OpenAI's ``{type: "function", function: {...}}`` (or the Responses API's flat form), MCP's
    ``inputSchema`` and Anthropic's ``input_schema``. A bad entry is an :class:`InputError` that
    names it."""
    if not isinstance(item, dict):
        raise InputError(
            f"A tool entry is not a JSON object: {json.dumps(item)[:120]}",
            hint="Each tool is an object such as {name, description, parameters}.",
        )
    if item.get("type") == "function" and isinstance(item.get("function"), dict):
        item = {
            **item["function"],
            **{k: v for k, v in item.items() if k not in ("type", "function")},
        }
    data = dict(item)
    for key in _SCHEMA_KEYS:
        if key in data and "parameters" not in data:
            data["parameters"] = data.pop(key)
    params = data.get("parameters") or {}
    if isinstance(params, dict) and params.get("type") == "dict":  # BFCL writes "dict"
        params = {**params, "type": "object"}
    data["parameters"] = params or {"type": "object", "properties": {}}
    if "name" not in data:
        raise InputError(
            f"A tool entry has no name: {json.dumps(item)[:120]}",
            hint="Each tool needs at least a name and a description.",
        )
    try:
        return ToolCard.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors()
        )
        raise InputError(
            f"Tool {str(data['name'])[:80]!r} is not a valid tool entry ({problems}).",
            hint="Fix the field named there: name and description are text, parameters a JSON "
            'Schema object such as {"type": "object", "properties": {...}}, side_effect one of '
            "read, write, delete, external.",
        ) from exc


_EFFECTS: dict[str, SideEffect] = {"DELETE": "delete", "GET": "read", "HEAD": "read"}


def cards_from_openapi(doc: dict[str, Any]) -> list[ToolCard]:
    """One card per operation of an OpenAPI 3 / Swagger 2 document: the ``verb_noun`` name
    the REST tools use, summary and description, parameters (and ``body``) as a JSON Schema,
    and the side effect its method implies (GET read, DELETE delete, others write)."""
    from toolrag.cards.openapi import operations

    cards = []
    for op in operations(doc):
        props: dict[str, Any] = {
            p.name: {**p.json_schema, "description": p.description} for p in op.params
        }
        required = [p.name for p in op.params if p.required]
        if op.body_schema is not None:
            props["body"] = {"description": "The JSON request body.", **op.body_schema}
            if op.body_required:
                required.append("body")
        text = " ".join(x for x in (op.summary, op.description) if x)
        if op.summary and op.description.startswith(op.summary):
            text = op.description
        cards.append(
            ToolCard(
                name=op.name,
                description=text or f"{op.method} {op.path}.",
                parameters={"type": "object", "properties": props, "required": required},
                side_effect=_EFFECTS.get(op.method, "write"),
                tags=[op.method.lower(), op.path],
            )
        )
    return cards


def _parse_whole(path: Path, text: str) -> Any:
    """The file as one YAML/JSON value, or None (JSONL and JSON lists are read below)."""
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            return yaml.safe_load(text)
        return json.loads(text) if text.lstrip().startswith("{") else None
    except (yaml.YAMLError, json.JSONDecodeError):
        return None


def load_tool_list(path: Path, conflicts: list[str] | None = None) -> list[ToolCard]:
    """A JSON tool list file (or JSONL, one tool per line; or a list wrapped as
    ``{"tools": [...]}``, as MCP's tools/list returns it), or an OpenAPI / Swagger document
    (JSON or YAML): one card per operation. A tool listed twice is kept once, the first time;
    ``conflicts`` (when given) collects the names listed again with other content."""
    if not path.is_file():
        raise InputError(
            f"Tool file {path} does not exist.",
            hint="Pass a JSON list of {name, description, parameters} objects.",
        )
    text = path.read_text(encoding="utf-8-sig")
    whole = _parse_whole(path, text)
    if isinstance(whole, dict) and ("openapi" in whole or "swagger" in whole):
        return cards_from_openapi(whole)
    if isinstance(whole, dict):  # a wrapped list ({"tools": [...]}) or a single tool
        listed = next((whole[k] for k in _LIST_KEYS if isinstance(whole.get(k), list)), [whole])
        return dedupe([card_from_dict(i) for i in listed], conflicts)
    if isinstance(whole, list) and path.suffix.lower() in (".yaml", ".yml"):
        return dedupe([card_from_dict(i) for i in whole if isinstance(i, dict)], conflicts)
    try:
        items = (
            json.loads(text)
            if text.lstrip().startswith("[")
            else [json.loads(line) for line in text.splitlines() if line.strip()]
        )
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}).",
            hint="Fix the JSON, then run the command again.",
        ) from exc
    return dedupe([card_from_dict(i) for i in items], conflicts)


def load_yaml_cards(folder: Path) -> list[ToolCard]:
    """Every card in the ``*.yaml`` files of ``folder`` (a file holds one card or a list)."""
    cards: list[ToolCard] = []
    for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
            items = data if isinstance(data, list) else [data]
            cards += [card_from_dict(item) for item in items if isinstance(item, dict)]
        except (yaml.YAMLError, ValidationError, InputError) as exc:
            raise InputError(
                f"{path} is not a valid tool card file: {str(exc).splitlines()[0][:200]}",
                hint="Each entry needs a name; see toolspecs/README.md for the card fields.",
            ) from exc
    return cards


OVERLAY_FIELDS = (
    "examples", "tags", "side_effect", "version", "deprecated_by", "pinned", "companion",
    "synthetic",
)  # fmt: skip


def apply_overlays(cards: Sequence[ToolCard], overlays: Sequence[ToolCard]) -> list[ToolCard]:
    """Cards with the YAML fields of ``overlays`` of the same name laid over them: a YAML
    card adds examples, tags, a side effect or ``deprecated_by`` to a tool built in code (its
    description and parameters stay the code's). An overlay naming no tool is ignored; two
    overlays of one tool (``examples`` in one file, ``synthetic`` requests in another) both
    apply, the later one's fields winning."""
    updates: dict[str, dict[str, Any]] = {}
    for overlay in overlays:  # several files may name one tool: their fields add up, in order
        given = overlay.model_fields_set & set(OVERLAY_FIELDS)
        updates.setdefault(overlay.name, {}).update({f: getattr(overlay, f) for f in given})
    return [
        card.model_copy(update=updates[card.name]) if card.name in updates else card
        for card in cards
    ]


def cards_from_tools(tools: Iterable[BaseTool], **extra: Any) -> list[ToolCard]:
    """Cards for LlamaIndex tools (a ``BaseToolSpec.to_tool_list()``, QueryEngineTools…)."""
    return [
        ToolCard(
            name=t.metadata.get_name(),
            description=t.metadata.description,
            parameters=t.metadata.get_parameters_dict(),
            **extra,
        )
        for t in tools
    ]


def dedupe(cards: Sequence[ToolCard], conflicts: list[str] | None = None) -> list[ToolCard]:
    """First card per id wins (pools often list the same function several times). The name of
    a card listed again with other content (another description or parameters: the later one
    is dropped) is added to ``conflicts`` when given, once, so a caller can say so."""
    seen: dict[str, ToolCard] = {}
    for card in cards:
        first = seen.setdefault(card.id, card)
        if (
            conflicts is not None
            and first is not card
            and first.content_hash() != card.content_hash()
            and card.name not in conflicts
        ):
            conflicts.append(card.name)
    return list(seen.values())
