"""The router's reply held to the offered tools: the decision's JSON schema, with each call
written for one offered tool, with that tool's own arguments, types and listed values.

Held only to a generic schema (``{"tool": string, "arguments": object}``), a small model writes
calls the router's checks then refuse: a tool that was not offered, an argument the tool does
not take, a value outside a parameter's list (``document_type="subcontracts"`` where the tool
lists ``bid``, ``contract``...), a required argument left out. Each refusal costs a repair round
(the model reads the whole prompt and the errors again), and a decision still wrong after it
falls back to a plain ReAct run that reads a new prompt from its first token.

:func:`decision_schema` gives the schema whose ``calls`` items are one of the offered tools'
call schemas (:func:`call_schema`): ``tool`` is a constant, ``arguments`` is the tool's own
parameters schema (:func:`arguments_schema`). llama.cpp turns it into a grammar, and an
OpenAI-compatible server takes it as its ``response_format``, so such a call cannot be written
at all. What a schema cannot hold (an id the question never gave, a filter it does not name)
is still checked after the reply.

A grammar admits an object's properties in one order: the required ones, then the optional
ones, each in the schema's order (llama.cpp's converter). :func:`ordered_arguments` writes an
example's arguments in that order, so that the model, which copies the examples' order, is not
made to leave out an argument it meant to write after one that comes later in the schema.

A tool whose schema the grammar cannot hold whole (references that loop or nest deeper than
:data:`MAX_DEPTH`, or a schema longer than :data:`MAX_SCHEMA_CHARS` once trimmed) keeps its
constant name and takes any JSON object as its arguments: its arguments are checked after the
reply, as before.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.tools import BaseTool

from toolrag.routing.models import RouteDecision
from toolrag.tools.prompting import tool_schema

__all__ = [
    "MAX_SCHEMA_CHARS",
    "arguments_schema",
    "call_schema",
    "decision_schema",
    "ordered_arguments",
]

# A tool's arguments schema longer than this once trimmed (a grammar grows with it, and every
# token the model writes is checked against it) is held only to "a JSON object".
MAX_SCHEMA_CHARS = 6000
# How deep a tool's schema is followed through its references and nested objects.
MAX_DEPTH = 8

# The keywords a grammar is built from; the rest (titles, descriptions, defaults, examples)
# are for the prompt, which lists them. Patterns and lengths are left out: a pattern is turned
# into grammar rules of its own (a user's schema is not ours to trust to stay small) and a
# length becomes a repetition as long as the bound.
_KEPT = {
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "items",
    "format",
    "minItems",
    "maxItems",
}
# String formats llama.cpp's converter has rules for; another format is left out (any string).
_FORMATS = {"date", "time", "date-time", "uuid"}
_ANY_OBJECT: dict[str, Any] = {"type": "object"}


class _TooDeep(ValueError):
    """A schema whose references loop or nest deeper than :data:`MAX_DEPTH`."""


def _trimmed(node: Any, defs: Mapping[str, Any], depth: int) -> Any:
    """``node`` with its local references inlined and only :data:`_KEPT` keywords kept."""
    if depth > MAX_DEPTH:
        raise _TooDeep
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/") or name not in defs:
            return {}  # a reference outside the schema: any value
        return _trimmed(defs[name], defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _KEPT:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: _trimmed(v, defs, depth + 1) for k, v in value.items()}
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            out[key] = [_trimmed(v, defs, depth + 1) for v in value]
        elif key == "items" and isinstance(value, dict):
            out[key] = _trimmed(value, defs, depth + 1)
        elif key == "format":
            if value in _FORMATS:
                out[key] = value
        elif key == "required" and isinstance(value, list):
            props = node.get("properties")
            out[key] = [k for k in value if isinstance(props, dict) and k in props]
        elif key in ("enum", "const", "type", "minItems", "maxItems"):
            out[key] = copy.deepcopy(value)
    if out.get("type") == "object" and not out.get("properties"):
        return dict(_ANY_OBJECT)  # a free-form object (a tool's **kwargs)
    if "enum" in out and not out["enum"]:
        del out["enum"]
    return out


def arguments_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool's parameters schema as a grammar holds it: references inlined, only the
    keywords a grammar is built from, no other properties than the tool's (an unknown argument
    cannot be written). ``{"type": "object"}`` (any object) for a tool without a usable schema
    or one the grammar cannot hold whole."""
    if not schema or not isinstance(schema.get("properties"), dict):
        return dict(_ANY_OBJECT)
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    try:
        out = _trimmed(dict(schema), defs, 0)
    except _TooDeep:
        return dict(_ANY_OBJECT)
    if not isinstance(out, dict) or len(json.dumps(out)) > MAX_SCHEMA_CHARS:
        return dict(_ANY_OBJECT)
    out["type"] = "object"
    out["additionalProperties"] = False  # JSON Schema's default admits any other argument
    return out


def call_schema(tool: BaseTool) -> dict[str, Any]:
    """One call of ``tool``: its exact name, and arguments its own schema admits."""
    return {
        "type": "object",
        "properties": {
            "tool": {"const": tool.metadata.get_name()},
            "arguments": arguments_schema(tool_schema(tool)),
        },
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }


def decision_schema(min_calls: int = 0, tools: Sequence[BaseTool] = ()) -> dict[str, Any]:
    """:class:`RouteDecision`'s JSON schema. With ``tools`` (the offered ones), each call is
    one of theirs (:func:`call_schema`). With ``min_calls`` (a question of that many parts),
    only ``call_tools`` with at least that many calls is admitted: a small model shown the
    parts still writes one call and stops, and the grammar makes it go on."""
    schema = RouteDecision.model_json_schema()
    props = schema["properties"]
    if tools:
        calls = [call_schema(t) for t in tools]
        props["calls"]["items"] = calls[0] if len(calls) == 1 else {"anyOf": calls}
        schema.pop("$defs", None)
    if min_calls > 1:
        props["action"]["enum"] = ["call_tools"]
        props["calls"]["minItems"] = min_calls
        schema["required"] = ["action", "calls"]
    return schema


def ordered_arguments(arguments: Mapping[str, Any], tool: BaseTool | None) -> dict[str, Any]:
    """``arguments`` in the order a grammar admits them (the tool's required arguments, then
    its optional ones, each in the schema's order; any others after, as given)."""
    schema = tool_schema(tool) if tool is not None else None
    props = list((schema or {}).get("properties") or {})
    if not props:
        return dict(arguments)
    required = set((schema or {}).get("required") or [])
    order = [k for k in props if k in required] + [k for k in props if k not in required]
    rank = {k: n for n, k in enumerate(order)}
    return dict(sorted(arguments.items(), key=lambda kv: rank.get(kv[0], len(rank))))
