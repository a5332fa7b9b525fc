"""REST tools from an OpenAPI document, behind a guard.

``OpenAPIToolSpec`` (a ``BaseToolSpec``) builds one tool per operation: the name in verb_noun
form from the operationId, the description from the summary and description, and the arguments
from the path, query, header and body schemas with their descriptions.

``RestGuard`` makes every call:

- only to the configured base URL: the final URL must keep its scheme, host, port and path
  prefix; path parameters are percent-encoded and may not contain ``/``, ``\\``, ``%`` or be
  ``.``/``..``; redirects are followed only while they stay under the base URL;
- GET is ``read``; another method runs only when its tool card (``operations:`` in the YAML)
  gives it a side-effect class, and a ``write`` carries an ``Idempotency-Key`` derived from its
  arguments, so a repeated call cannot write twice;
- auth headers come from the environment at call time, are never part of a result, a log line or
  an error, and are masked if a server echoes them;
- with a timeout, retries with backoff for GETs only, a request body cap, and a response cap
  that sets ``truncated``; JSON comes back compact, and HTTP and network failures become a
  :class:`ToolResult`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import httpx
import yaml
from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.tools.tool_spec.base import BaseToolSpec
from pydantic import BaseModel, Field, ValidationError, create_model

from toolrag.cards.openapi import Operation, load_document, operations, snake
from toolrag.errors import ConfigError
from toolrag.tools.approval import is_approved
from toolrag.tools.base import call_validated
from toolrag.tools.result import ErrorCode, Source, ToolResult
from toolrag.tools.self_timed import SelfTimedTool

SideEffect = Literal["read", "write", "delete", "external"]
_BLOCKED_HEADERS = {"host", "authorization", "cookie", "content-length", "transfer-encoding"}
_RETRY_STATUS = {502, 503, 504}


class AuthConfig(BaseModel):
    """Where the credential comes from; the value itself never appears in a config file."""

    header: str = "Authorization"
    env: str = Field(description="Environment variable holding the secret.")
    prefix: str = Field("", description='Written before the secret, e.g. "Bearer ".')


class OperationCard(BaseModel):
    side_effect: SideEffect = "read"
    enabled: bool = True


class RestAPIConfig(BaseModel):
    """One REST source (an entry of ``toolspecs/rest.yaml``)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,40}$")
    document: str = Field(description="OpenAPI/Swagger file (relative to toolspecs/) or URL.")
    base_url: str
    base_url_env: str | None = Field(None, description="Env var that overrides base_url.")
    auth: AuthConfig | None = None
    timeout_s: float = Field(10.0, gt=0, le=120)
    retries: int = Field(2, ge=0, le=5)
    max_response_bytes: int = Field(65_536, ge=1024)
    max_body_bytes: int = Field(32_768, ge=64)
    operations: dict[str, OperationCard] = Field(default_factory=dict)

    def effective_base_url(self) -> str:
        return (os.environ.get(self.base_url_env) if self.base_url_env else None) or self.base_url


def load_rest_configs(path: Path) -> list[RestAPIConfig]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
        return [RestAPIConfig.model_validate(a) for a in raw.get("apis", [])]
    except (OSError, yaml.YAMLError, ValidationError, AttributeError) as exc:
        raise ConfigError(
            f"The REST tool spec {path} is invalid: {str(exc).splitlines()[0]}",
            hint="Each entry of 'apis' needs name, document and base_url.",
        ) from exc


class RestGuard:
    """The one way REST tools reach the network."""

    def __init__(self, config: RestAPIConfig, client: httpx.Client | None = None) -> None:
        self.config = config
        self.base = httpx.URL(config.effective_base_url().rstrip("/") + "/")
        if self.base.scheme not in ("http", "https") or not self.base.host:
            raise ConfigError(
                f"base_url {config.base_url!r} is not an http(s) URL.",
                hint="Use e.g. http://127.0.0.1:8765.",
            )
        self.client = client or httpx.Client(timeout=config.timeout_s, follow_redirects=False)

    # --- secrets --------------------------------------------------------------------------------
    def _secret(self) -> str | None:
        auth = self.config.auth
        return os.environ.get(auth.env) or None if auth else None

    def _mask(self, text: str) -> str:
        secret = self._secret()
        return text.replace(secret, "****") if secret and len(secret) >= 4 else text

    # --- URL checks -----------------------------------------------------------------------------
    def on_base(self, url: httpx.URL) -> bool:
        return (
            url.scheme == self.base.scheme
            and url.host == self.base.host
            and url.port == self.base.port
            and url.raw_path.decode("ascii", "replace").startswith(self.base.path)
            and "/../" not in url.path + "/"
            and "/./" not in url.path + "/"
        )

    def build_url(self, template: str, path_args: dict[str, Any]) -> httpx.URL | ToolResult:
        if not template.startswith("/") or template.startswith("//") or "://" in template:
            return ToolResult.fail(
                ErrorCode.FORBIDDEN,
                f"The operation path {template!r} is not relative to the API's base URL.",
                suggestion="Only operations under the configured base URL can be called.",
                recoverable=False,
            )
        path = template
        for name, value in path_args.items():
            text = str(value)
            if (
                not text
                or text in (".", "..")
                or any(c in text for c in "/\\%?#")
                or any(ord(c) < 32 for c in text)
            ):
                return ToolResult.fail(
                    ErrorCode.INVALID_ARGUMENT,
                    f"The path parameter {name}={text!r} is not a plain identifier.",
                    suggestion=f"Pass {name} as a single value without '/', '..', '%' or '?'.",
                )
            path = path.replace("{" + name + "}", quote(text, safe=""))
        url = httpx.URL(str(self.base).rstrip("/") + path)
        if not self.on_base(url):
            return ToolResult.fail(
                ErrorCode.FORBIDDEN,
                f"{url.host}{url.path} is outside the API's base URL {self.base}.",
                suggestion="Only paths under the configured base URL can be called.",
                recoverable=False,
            )
        return url

    # --- the call -------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        url: httpx.URL,
        *,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        body: Any = None,
        idempotency_key: str | None = None,
    ) -> ToolResult:
        send_headers = {"Accept": "application/json"}
        for k, v in (headers or {}).items():
            if k.lower() not in _BLOCKED_HEADERS and (
                not self.config.auth or k.lower() != self.config.auth.header.lower()
            ):
                send_headers[k] = str(v)
        secret = self._secret()
        if self.config.auth and secret:
            send_headers[self.config.auth.header] = self.config.auth.prefix + secret
        if idempotency_key:
            send_headers["Idempotency-Key"] = idempotency_key
        content: bytes | None = None
        if body is not None:
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            if len(content) > self.config.max_body_bytes:
                return ToolResult.fail(
                    ErrorCode.TOO_LARGE,
                    f"The request body is {len(content)} bytes; the limit is "
                    f"{self.config.max_body_bytes}.",
                    suggestion="Send less data in one call.",
                )
            send_headers["Content-Type"] = "application/json"
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        attempts = 1 + (self.config.retries if method == "GET" else 0)
        for attempt in range(attempts):
            try:
                return self._send(method, url, params, send_headers, content)
            except _Retryable as exc:
                if attempt + 1 >= attempts:
                    return exc.result
                time.sleep(0.2 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self,
        method: str,
        url: httpx.URL,
        params: dict[str, Any],
        headers: dict[str, str],
        content: bytes | None,
    ) -> ToolResult:
        current = url
        for _hop in range(4):
            try:
                with self.client.stream(
                    method, current, params=params, headers=headers, content=content
                ) as response:
                    if response.is_redirect:
                        target = current.join(response.headers.get("location", ""))
                        if not self.on_base(target):
                            return ToolResult.fail(
                                ErrorCode.FORBIDDEN,
                                f"The server redirected to {target.host}{target.path}, outside "
                                f"{self.base}; the redirect was not followed.",
                                suggestion="Use the API's own endpoints.",
                                recoverable=False,
                            )
                        if response.status_code in (301, 302, 303):
                            method, content = "GET", None
                        current, params = target, {}
                        continue
                    raw, truncated = _read_capped(response, self.config.max_response_bytes)
                    return self._result(method, current, response, raw, truncated)
            except httpx.TimeoutException as exc:
                raise _Retryable(
                    ToolResult.fail(
                        ErrorCode.TIMEOUT,
                        f"{method} {current.path} got no answer within "
                        f"{self.config.timeout_s:g} s.",
                        suggestion="Try again later or narrow the request.",
                    )
                ) from exc
            except httpx.TransportError as exc:
                raise _Retryable(
                    ToolResult.fail(
                        ErrorCode.NETWORK_ERROR,
                        f"{method} {current.path} could not reach {self.base.host}: "
                        f"{type(exc).__name__}.",
                        suggestion="The service may be down; try again later.",
                    )
                ) from exc
        return ToolResult.fail(
            ErrorCode.HTTP_ERROR,
            "Too many redirects.",
            suggestion="Use the API's own endpoints.",
            recoverable=False,
        )

    def _result(
        self,
        method: str,
        url: httpx.URL,
        response: httpx.Response,
        raw: bytes,
        truncated: bool,
    ) -> ToolResult:
        ctype = response.headers.get("content-type", "")
        textual = not ctype or any(t in ctype for t in ("json", "text", "xml", "javascript"))
        if textual:
            text = self._mask(raw.decode(response.encoding or "utf-8", errors="replace"))
        else:
            text = f"<{len(raw)} bytes of {ctype.split(';')[0]}{', cut' if truncated else ''}>"
        data: Any = text
        if "json" in ctype and not truncated:
            try:
                data = json.loads(text)
            except ValueError:
                data = text
        source = Source(file=str(url.copy_with(query=None)), locator=f"{method} {url.path}")
        status = response.status_code
        if status >= 400:
            detail = data.get("detail", data) if isinstance(data, dict) else data
            detail_text = json.dumps(detail, ensure_ascii=False)[:500]
            result = ToolResult.fail(
                ErrorCode.NOT_FOUND if status == 404 else ErrorCode.HTTP_ERROR,
                f"{method} {url.path} returned HTTP {status}: {detail_text}",
                suggestion=_status_hint(status),
                recoverable=status < 500 or status in _RETRY_STATUS,
            )
            if status in _RETRY_STATUS and method == "GET":
                raise _Retryable(result)
            return result
        result = ToolResult.ok({"status": status, "body": data}, sources=[source])
        if result.empty:
            result.suggestion = (
                "Nothing matched. Drop any filter the question does not state (dates, "
                "status), or check the identifiers you passed."
            )
        if truncated:
            result.truncated = True
            result.suggestion = "The response was cut at the size limit: ask for less."
        return result


class _Retryable(Exception):
    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error_message)
        self.result = result


def _read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [_query_value(v) for v in value]
    return value


def _status_hint(status: int) -> str:
    if status == 404:
        return "Check the id or code; list the collection first to find valid ones."
    if status in (400, 422):
        return "Fix the arguments to match the tool's parameters and formats."
    if status in (401, 403):
        return "The API refused the credentials; this needs a person to fix the access."
    if status == 429:
        return "Too many requests: wait before trying again."
    return "The service failed; try again later or use another source."


# --- JSON Schema -> argument model ---------------------------------------------------------------
def _annotation(schema: dict[str, Any]) -> Any:
    enum = schema.get("enum")
    if enum and all(isinstance(v, str | int) for v in enum):
        return Literal[tuple(enum)]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if "anyOf" in schema or "oneOf" in schema:
        options = [
            o for o in schema.get("anyOf", schema.get("oneOf", [])) if o.get("type") != "null"
        ]
        return _annotation(options[0]) if len(options) == 1 else Any
    if kind == "array":
        item: Any = _annotation(schema.get("items") or {})
        return list[item]
    simple: dict[str, Any] = {
        "string": str,
        "integer": int,
        "number": float,
        "boolean": bool,
        "object": dict[str, Any],
    }
    return simple.get(str(kind), Any)


class _Arg(BaseModel):
    field: str
    name: str
    location: str
    required: bool = False


IDEMPOTENCY_DESCRIPTION = (
    "Repeat-safe key of this write: the same key never writes twice. Leave it out and toolrag "
    "derives one from the run and the step."
)


def _args_model(
    op: Operation, owned_headers: set[str] | None = None, effect: SideEffect = "read"
) -> tuple[type[BaseModel], list[_Arg]]:
    owned_headers = {"idempotency-key", *(owned_headers or set())}
    fields: dict[str, Any] = {}
    args: list[_Arg] = []

    def add(name: str, location: str, schema: dict[str, Any], required: bool, desc: str) -> None:
        field = snake(name) or "value"
        if field in fields or field.startswith("_") or hasattr(BaseModel, field):
            field = f"{location}_{field}"  # a clash, or a pydantic attribute ("schema", "json")
        ann = _annotation(schema)
        description = desc or str(schema.get("description", "")) or name
        if schema.get("format") in ("date", "date-time"):
            description += f" ({schema['format']}, ISO 8601)"
        default = ... if required else None
        fields[field] = (ann if required else ann | None, Field(default, description=description))
        args.append(_Arg(field=field, name=name, location=location, required=required))

    for p in op.params:
        if p.location == "header" and p.name.lower() in owned_headers:
            continue  # the guard sets these (credentials, idempotency keys), not the model
        add(p.name, p.location, p.json_schema, p.required, p.description)
    body = op.body_schema
    if body is not None:
        props = body.get("properties") if body.get("type", "object") == "object" else None
        if props:
            required = set(body.get("required") or [])
            for name, schema in props.items():
                add(name, "body", schema, name in required and op.body_required, "")
        else:
            add("body", "body_raw", body, op.body_required, "The JSON request body.")
    if effect == "write" and "idempotency_key" not in fields:
        fields["idempotency_key"] = (str | None, Field(None, description=IDEMPOTENCY_DESCRIPTION))
    model: type[BaseModel] = create_model(
        f"{snake(op.name).title().replace('_', '')}Args", **fields
    )
    return model, args


class OpenAPIToolSpec(BaseToolSpec):
    """One guarded tool per operation of an OpenAPI 3 / Swagger 2 document."""

    spec_functions: list[Any] = []  # noqa: RUF012 - the tools are built from the document

    def __init__(
        self,
        config: RestAPIConfig,
        document: dict[str, Any],
        client: httpx.Client | None = None,
    ) -> None:
        self.config = config
        self.guard = RestGuard(config, client)
        self.operations = operations(document)
        self.title = str((document.get("info") or {}).get("title") or config.name)

    @classmethod
    def from_config(
        cls, config: RestAPIConfig, toolspecs_dir: Path, client: httpx.Client | None = None
    ) -> OpenAPIToolSpec:
        source = config.document
        if not source.startswith(("http://", "https://")):
            source = str(toolspecs_dir / source)
        return cls(config, load_document(source, config.timeout_s), client)

    def side_effect(self, op: Operation) -> SideEffect | None:
        """The operation's class: GET is read; other methods only from their card."""
        card = self.config.operations.get(op.name)
        if card is not None and not card.enabled:
            return None
        if op.method in ("GET", "HEAD"):
            return "read"
        return card.side_effect if card is not None else None

    def side_effects(self) -> dict[str, SideEffect]:
        """The side-effect class of each tool this spec offers, by tool name."""
        return {
            op.name: effect
            for op in self.operations
            if (effect := self.side_effect(op)) is not None
        }

    def to_tool_list(
        self, spec_functions: Any = None, func_to_metadata_mapping: Any = None
    ) -> list[FunctionTool]:
        tools = []
        for op in self.operations:
            effect = self.side_effect(op)
            if effect is None:
                continue  # not allowed: a non-GET operation without a card
            tools.append(self._tool(op, effect))
        return tools

    def _tool(self, op: Operation, effect: SideEffect) -> FunctionTool:
        owned = {self.config.auth.header.lower()} if self.config.auth else set()
        model, args = _args_model(op, owned, effect)
        guard = self.guard

        def call(**kwargs: Any) -> ToolResult:
            if effect in ("delete", "external") and not is_approved(op.name):
                return ToolResult.fail(
                    ErrorCode.APPROVAL_DENIED,
                    f"{op.name} is a {effect} action and needs a person's approval.",
                    suggestion="Tell the user what you would do and ask them to approve it.",
                    recoverable=False,
                )
            path_args, query, headers, body = {}, {}, {}, {}
            raw_body: Any = None
            for a in args:
                value = kwargs.get(a.field)
                if value is None:
                    continue
                if a.location == "path":
                    path_args[a.name] = value
                elif a.location == "query":
                    query[a.name] = value
                elif a.location == "header":
                    headers[a.name] = str(value)
                elif a.location == "body":
                    body[a.name] = value
                else:
                    raw_body = _parse_body(value)
                    if isinstance(raw_body, ToolResult):
                        return raw_body
            url = guard.build_url(op.path, path_args)
            if isinstance(url, ToolResult):
                return url
            payload = raw_body if raw_body is not None else (body or None)
            key = kwargs.get("idempotency_key") or None
            if effect != "read" and key is None:  # called without the guard: by content
                digest = json.dumps([op.name, path_args, query, payload], sort_keys=True)
                key = hashlib.sha256(digest.encode()).hexdigest()[:32]
            result = guard.request(
                op.method, url, query=query, headers=headers, body=payload, idempotency_key=key
            )
            filters = [
                f"{a.field}={kwargs[a.field]!r}"
                for a in args
                if a.location == "query" and not a.required and kwargs.get(a.field) is not None
            ]
            if result.empty and filters:
                result.suggestion = (
                    f"Nothing matched these optional filters: {', '.join(filters)}. Call again "
                    "without each one the question does not state (a date range it does not "
                    "give, a status it does not name), or check the identifiers you passed."
                )
            return result

        def run(**kwargs: Any) -> ToolResult:
            return call_validated(op.name, call, model, kwargs)

        return SelfTimedTool(  # httpx's timeout and the retries bound each call
            fn=run,
            metadata=ToolMetadata(
                name=op.name, description=self._describe(op, effect), fn_schema=model
            ),
        )

    def _describe(self, op: Operation, effect: SideEffect) -> str:
        parts = [op.summary.rstrip(".") + "." if op.summary else ""]
        if op.description and op.description != op.summary:
            parts.append(" ".join(op.description.split()))
        if not any(parts):
            parts.append(f"Calls {op.method} {op.path} on {self.title}.")
        parts.append(f"({self.title}, {op.method} {op.path}, {effect}.)")
        return " ".join(p for p in parts if p)


def _parse_body(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return ToolResult.fail(
            ErrorCode.INVALID_ARGUMENT,
            "The body is not valid JSON.",
            suggestion='Pass the body as a JSON object, e.g. {"key": "value"}.',
        )
