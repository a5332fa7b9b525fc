"""Reading an OpenAPI 3 or Swagger 2 document into operations (one future tool each).

Local ``$ref`` pointers are resolved (with a depth limit for recursive schemas); Swagger 2
``body``/``formData`` parameters and OpenAPI 3 ``requestBody`` become one JSON body schema.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import httpx
import yaml
from pydantic import BaseModel, Field

from toolrag.errors import ConfigError

HTTP_METHODS = ("get", "post", "put", "patch", "delete", "head")
ParamLocation = Literal["path", "query", "header", "body"]

_VERBS = {
    "get", "list", "search", "find", "fetch", "read", "create", "add", "update", "set",
    "delete", "remove", "post", "put", "patch", "send", "run", "check", "count",
    "cancel", "submit", "approve", "reject", "close", "archive", "publish", "upload",
    "download", "convert", "calculate", "compute", "generate", "start", "stop", "enable",
    "disable", "assign", "schedule", "export", "import", "validate", "verify", "query",
    "register", "reset", "move", "copy", "rename", "book", "pay", "refund", "transfer",
    "notify", "invite", "subscribe", "unsubscribe", "attach", "detach", "share", "deploy",
    "execute", "summarize", "extract", "retrieve", "describe", "upsert", "insert", "replace",
    "draft", "mark", "apply", "save", "load", "sync", "track", "estimate", "translate",
}  # fmt: skip
_METHOD_VERB = {
    "get": "get",
    "head": "get",
    "post": "create",
    "put": "update",
    "patch": "update",
    "delete": "delete",
}


class Param(BaseModel):
    name: str
    location: ParamLocation
    required: bool = False
    description: str = ""
    json_schema: dict[str, Any] = Field(default_factory=dict)


class Operation(BaseModel):
    """One HTTP operation of the document."""

    name: str = Field(description="Tool name in verb_noun form, from the operationId.")
    operation_id: str = ""
    method: str
    path: str
    summary: str = ""
    description: str = ""
    params: list[Param] = Field(default_factory=list)
    body_required: bool = False
    body_schema: dict[str, Any] | None = None


def load_document(source: str | Path, timeout_s: float = 10.0) -> dict[str, Any]:
    """The parsed document from a file path or an http(s) URL (JSON or YAML)."""
    text: str
    src = str(source)
    try:
        if src.startswith(("http://", "https://")):
            response = httpx.get(src, timeout=timeout_s, follow_redirects=False)
            response.raise_for_status()
            text = response.text
        else:
            text = Path(src).read_text(encoding="utf-8-sig")
        doc = yaml.safe_load(text) if not text.lstrip().startswith("{") else json.loads(text)
    except (OSError, httpx.HTTPError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"Cannot read the OpenAPI document {src}: {str(exc).splitlines()[0][:200]}",
            hint="Give a readable OpenAPI 3 / Swagger 2 file path or URL.",
        ) from exc
    if not isinstance(doc, dict) or not ("openapi" in doc or "swagger" in doc):
        raise ConfigError(
            f"{src} is not an OpenAPI 3 or Swagger 2 document.",
            hint="It needs an 'openapi' or 'swagger' version field and 'paths'.",
        )
    return doc


# Inlining stops at this many $ref hops, or once one operation's inlined schemas hold this many
# objects: big specs share and nest schemas so widely that full inlining grows exponentially.
MAX_REF_HOPS = 8
MAX_INLINED_OBJECTS = 2000


def _lookup(doc: dict[str, Any], ref: str) -> Any:
    """The object a local ``#/a/b`` pointer names (``{}`` when it names nothing)."""
    target: Any = doc
    for part in ref[2:].split("/"):
        target = target.get(part.replace("~1", "/").replace("~0", "~"), {})
        if not isinstance(target, dict):
            return {}
    return target


def _resolve(
    doc: dict[str, Any], node: Any, depth: int = 0, budget: list[int] | None = None
) -> Any:
    """Inline local ``$ref`` pointers; a reference past ``MAX_REF_HOPS`` hops, or met after the
    ``budget`` (objects left to inline) ran out, becomes ``{type: object}``."""
    if budget is None:
        budget = [MAX_INLINED_OBJECTS]
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            if depth >= MAX_REF_HOPS or budget[0] <= 0:
                return {"type": "object"}
            return _resolve(doc, _lookup(doc, ref), depth + 1, budget)  # counts $ref hops only
        budget[0] -= 1
        return {k: _resolve(doc, v, depth, budget) for k, v in node.items() if k != "$ref"}
    if isinstance(node, list):
        return [_resolve(doc, v, depth, budget) for v in node]
    return node


def snake(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    return re.sub(r"[^a-zA-Z0-9]+", "_", text).strip("_").lower()


def tool_name(method: str, path: str, operation_id: str | None) -> str:
    """``verb_noun``: the operationId in snake case, with the HTTP verb in front when the id
    does not start with one; without an id, the verb and the path's literal segments."""
    literal = [s for s in path.split("/") if s and not s.startswith("{")]
    noun = snake("_".join(literal)) or "root"
    base = snake(operation_id or "")
    base = re.sub(r"_(get|post|put|patch|delete)$", "", base)  # FastAPI: read_x_path_get
    if not base:
        base = noun
    if base.split("_", 1)[0] not in _VERBS:
        base = f"{_METHOD_VERB.get(method, method)}_{base}"
    if "_" not in base:  # a bare verb ("get" for GET /get): add the noun
        base = f"{base}_{noun}"
    return base[:64]


def _swagger2_body(params: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, bool]:
    body = next((p for p in params if p.get("in") == "body"), None)
    if body is not None:
        return body.get("schema") or {"type": "object"}, bool(body.get("required"))
    form = [p for p in params if p.get("in") == "formData"]
    if not form:
        return None, False
    props = {
        p["name"]: {k: v for k, v in p.items() if k not in ("in", "name", "required")} for p in form
    }
    required = [p["name"] for p in form if p.get("required")]
    return {"type": "object", "properties": props, "required": required}, bool(required)


def operations(doc: dict[str, Any]) -> list[Operation]:
    """Every operation of the document, with unique tool names."""
    swagger2 = "swagger" in doc
    ops: list[Operation] = []
    seen: set[str] = set()
    for path, item in (doc.get("paths") or {}).items():
        ref = item.get("$ref") if isinstance(item, dict) else None
        if isinstance(ref, str) and ref.startswith("#/"):
            item = _lookup(doc, ref)
        if not isinstance(item, dict):
            continue
        for method in HTTP_METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            # Only what a call needs is inlined (not responses), each operation on its budget.
            budget = [MAX_INLINED_OBJECTS]
            raw_params = [
                p
                for p in _resolve(
                    doc, [*(item.get("parameters") or []), *(op.get("parameters") or [])], 0, budget
                )
                if isinstance(p, dict)
            ]
            params = []
            for p in raw_params:
                where = p.get("in")
                if where not in ("path", "query", "header"):
                    continue
                schema = p.get("schema") or {
                    k: v for k, v in p.items() if k in ("type", "format", "enum", "items")
                }
                params.append(
                    Param(
                        name=p["name"],
                        location=where,
                        required=bool(p.get("required")) or where == "path",
                        description=str(p.get("description", "")).strip(),
                        json_schema=schema,
                    )
                )
            declared = {p.name for p in params if p.location == "path"}
            for placeholder in re.findall(r"\{([^}/]+)\}", path):
                if placeholder not in declared:  # used in the path but not declared
                    params.append(Param(name=placeholder, location="path", required=True))
            if swagger2:
                body_schema, body_required = _swagger2_body(raw_params)
            else:
                rb = _resolve(doc, op.get("requestBody") or {}, 0, budget)
                content = rb.get("content") or {}
                media = content.get("application/json") or next(iter(content.values()), None)
                body_schema = (media or {}).get("schema") if media is not None else None
                body_required = bool(rb.get("required"))
            if body_schema is None and method in ("post", "put", "patch"):
                body_schema = {"description": "The JSON request body (the document declares none)."}
            name = tool_name(method, path, op.get("operationId"))
            unique, n = name, 2
            while unique in seen:
                unique, n = f"{name}_{n}", n + 1
            seen.add(unique)
            ops.append(
                Operation(
                    name=unique,
                    operation_id=str(op.get("operationId") or ""),
                    method=method.upper(),
                    path=path,
                    summary=str(op.get("summary") or "").strip(),
                    description=str(op.get("description") or "").strip(),
                    params=params,
                    body_required=body_required,
                    body_schema=body_schema,
                )
            )
    return ops
