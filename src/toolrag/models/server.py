"""The ``openai_like`` LLM: any OpenAI-compatible chat-completions server (vLLM, Ollama,
llama.cpp's servers), as LlamaIndex's ``OpenAILike`` plus what such servers need from us.

Three things differ from the in-process local model (see docs/llm-servers.md):

- **Stop sequences.** A ReAct step must end where the tool's observation begins, or the model
  writes the observation itself and the parser reads an ``Action Input`` that runs on into the
  invented text. The local wrapper stops at ``\\nObservation:`` itself; a server only stops where
  the request's ``stop`` says, so the ReAct modes send it.
- **Message shapes.** Servers validate requests strictly. LlamaIndex sends an assistant message
  that carries ``tool_calls`` with ``"content": null``; llama-cpp-python's server rejects it with
  HTTP 500 (its schema wants a string), so it is sent as ``""``, which OpenAI and vLLM accept too.
  Tool results go back as ``role: tool`` messages with their ``tool_call_id``; for a server whose
  chat format drops ``tool`` messages (llama-cpp-python's ``chatml-function-calling`` renders
  them empty), ``tool_result_role="user"`` sends them as user messages that name the call.
- **Silent replies.** A reply to a request with ``tools`` that holds neither text nor a tool
  call (llama-cpp-python's ``chatml-function-calling`` whenever the model answers) is asked
  again without ``tools``.
- **Structured output.** The router's decision is asked for with a ``response_format`` that
  carries its JSON schema: ``json_schema`` (OpenAI, vLLM, llama.cpp's ``llama-server``), else
  ``json_object`` with a ``schema`` (llama-cpp-python's server, which refuses the first), else a
  plain reply that the router parses and repairs. ``auto`` tries them in that order once per
  server and keeps the first it accepts; a format set by hand that the server refuses is a
  one-line error naming ``auto``.
- **Calls written as text.** A small model behind a server's native tool template may write
  its call as a JSON object in the reply's text (Qwen2.5-Coder under llama-server's ``--jinja``
  writes a fenced ``{"name": "run_sql", "arguments": {...}}``) rather than in the template's
  call tags, so the server returns no ``tool_calls``. A reply that is nothing but such an
  object (or a list of them), naming an offered tool with an arguments object, is read as
  those calls. Any other text stays the answer.
- **Errors.** A server's error (an HTTP status, a validation dump, a refused connection) becomes
  one :class:`~toolrag.errors.LLMServerError` sentence that names the mode that works, never the
  provider's raw message or a traceback.

The rewriting happens on the JSON request body in an httpx transport, so every LlamaIndex call
path (chat, tools, structured output, streaming) goes through the same code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

import httpx
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    ToolCallBlock,
)
from llama_index.llms.openai_like import OpenAILike
from pydantic import Field, PrivateAttr

from toolrag.errors import ContextOverflowError, LLMServerError

#: Where a ReAct step hands over to the tool (the local model's own stop list ends with it).
REACT_STOP = ["\nObservation:"]

ToolResultRole = Literal["tool", "user"]
#: how a reply is held to a JSON schema (``auto``: the first of the others the server accepts)
ResponseFormat = Literal["auto", "json_schema", "json_object", "none"]
_FORMATS: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "none")


def response_format_body(kind: ResponseFormat, schema: dict[str, Any], name: str) -> Any:
    """The request's ``response_format`` for ``kind`` (None: the request carries none)."""
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if kind == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _refused(exc: BaseException) -> int | None:
    """The HTTP status of a server that turned the request down as malformed (so a request
    without what it refused may pass), else None."""
    import openai

    cause = exc.__cause__ if isinstance(exc, LLMServerError) else exc
    if isinstance(cause, openai.APIStatusError) and cause.status_code in (400, 422, 500, 501):
        return cause.status_code
    return None


def reshape_messages(messages: list[dict[str, Any]], tool_result_role: ToolResultRole) -> None:
    """Rewrite chat-completions ``messages`` in place into the shapes strict servers accept:
    an assistant message with ``tool_calls`` gets ``content: ""`` instead of null; with
    ``tool_result_role="user"`` each ``tool`` message becomes a user message naming the call."""
    names: dict[str, str] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            if message.get("content") is None:
                message["content"] = ""
            for call in message["tool_calls"]:
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name", "tool"))
        elif role == "tool" and tool_result_role == "user":
            name = names.get(str(message.get("tool_call_id")), "the tool")
            messages[i] = {
                "role": "user",
                "content": f"Result of {name}:\n{message.get('content') or ''}",
            }


def _reshaped(request: httpx.Request, tool_result_role: ToolResultRole) -> httpx.Request:
    if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
        return request
    try:
        body = json.loads(request.content)
    except (ValueError, httpx.RequestNotRead):
        return request
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return request
    reshape_messages(body["messages"], tool_result_role)
    headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
    return httpx.Request(
        request.method,
        request.url,
        headers=headers,
        content=json.dumps(body).encode(),
        extensions=request.extensions,
    )


class ReshapingTransport(httpx.BaseTransport):
    """An httpx transport that sends chat-completions requests in strict servers' shapes."""

    def __init__(self, inner: httpx.BaseTransport, tool_result_role: ToolResultRole) -> None:
        self.inner, self.tool_result_role = inner, tool_result_role

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(_reshaped(request, self.tool_result_role))

    def close(self) -> None:
        self.inner.close()


class AsyncReshapingTransport(httpx.AsyncBaseTransport):
    """The async :class:`ReshapingTransport`."""

    def __init__(self, inner: httpx.AsyncBaseTransport, tool_result_role: ToolResultRole) -> None:
        self.inner, self.tool_result_role = inner, tool_result_role

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(_reshaped(request, self.tool_result_role))

    async def aclose(self) -> None:
        await self.inner.aclose()


def server_error(exc: Exception, *, api_base: str, mode: str, tools: bool) -> LLMServerError:
    """One sentence for a failed server request: what failed, and the mode that works."""
    import openai

    where = f"The LLM server at {api_base}"
    if isinstance(exc, openai.APITimeoutError):
        return LLMServerError(
            f"{where} did not answer in time.",
            hint="Raise TOOLRAG_LLM_TIMEOUT_S, or check that the server is not overloaded.",
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMServerError(
            f"{where} cannot be reached.",
            hint="Start the server, or fix TOOLRAG_API_BASE (it ends in /v1).",
        )
    status = getattr(exc, "status_code", None)
    if status in (401, 403):
        return LLMServerError(f"{where} refused the API key (HTTP {status}).",
                              hint="Set TOOLRAG_API_KEY to a key it accepts.")  # fmt: skip
    if status == 404:
        return LLMServerError(
            f"{where} does not serve this model or path (HTTP 404).",
            hint="Set TOOLRAG_LLM_MODEL to a name its /v1/models lists.",
        )
    overflow = context_overflow(exc) if status in (400, 413, 422, 500) else None
    if overflow is not None:
        asked, room = overflow
        size = f" ({asked:,} tokens; it holds {room:,})" if asked and room else ""
        return ContextOverflowError(
            f"{where} cannot take the prompt: it is longer than the model's context{size}.",
            hint="Offer fewer tools (TOOLRAG_TOOL_TOP_K) or use toolrag's tool retrieval rather "
            "than every tool, or serve the model with a larger context (llama-server "
            "--ctx-size, vLLM --max-model-len, Ollama num_ctx).",
        )
    if tools:
        return LLMServerError(
            f"{where} did not accept a tool-calling request (HTTP {status}): this server "
            "does not accept tool calls or their results.",
            hint="Use --mode react (TOOLRAG_AGENT_MODE=react), or start the server with tool "
            "support (llama-cpp-python: --chat_format chatml-function-calling; vLLM: "
            "--enable-auto-tool-choice).",
        )
    hint = "Check the server's log."
    if mode == "function":
        hint = "Check the server's log, or use --mode react (TOOLRAG_AGENT_MODE=react)."
    return LLMServerError(f"{where} failed a {mode} request (HTTP {status}).", hint=hint)


# how servers say a prompt does not fit: llama.cpp's llama-server ("exceed_context_size_error",
# with n_prompt_tokens and n_ctx), OpenAI ("context_length_exceeded"), vLLM ("maximum context
# length is N tokens. However, you requested M tokens"), llama-cpp-python ("Requested tokens (M)
# exceed context window of N")
_OVERFLOW = re.compile(
    r"exceed_context_size|context_length_exceeded|maximum context length"
    r"|exceed(?:s)? (?:the )?(?:available )?context",
    re.IGNORECASE,
)
_VLLM_SIZES = re.compile(r"maximum context length is (\d+) tokens.{0,80}?(\d+) tokens", re.S)
_LCP_SIZES = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


def context_overflow(exc: Exception) -> tuple[int | None, int | None] | None:
    """``(prompt tokens, context tokens)`` when the server refused a prompt longer than its
    context (either may be None when it does not say); None for any other error. Reads at
    most the first 2,000 characters of the reply."""
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    text = str(exc)[:2000]
    if not _OVERFLOW.search(text):
        return None
    if isinstance(error, dict) and isinstance(error.get("n_ctx"), int):
        asked = error.get("n_prompt_tokens")
        return (asked if isinstance(asked, int) else None), error["n_ctx"]
    if found := _VLLM_SIZES.search(text):
        return int(found.group(2)), int(found.group(1))
    if found := _LCP_SIZES.search(text):
        return int(found.group(1)), int(found.group(2))
    return None, None


def _uses_tools(messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> bool:
    if kwargs.get("tools") or kwargs.get("functions"):
        return True
    return any(m.role.value == "tool" or "tool_calls" in m.additional_kwargs for m in messages)


def _silent(response: ChatResponse, kwargs: dict[str, Any]) -> bool:
    """A reply to a request with tools that holds neither text nor a tool call.

    llama-cpp-python's ``chatml-function-calling`` does this whenever the model chooses to
    answer rather than call: its grammar for the answer admits only a function name or the
    end of the turn. The same messages without ``tools`` get the answer."""
    if not kwargs.get("tools"):
        return False
    message = response.message
    calls = message.additional_kwargs.get("tool_calls") or [
        b for b in message.blocks if isinstance(b, ToolCallBlock)
    ]
    return not calls and not (message.content or "").strip()


def _unfenced(text: str) -> str:
    """``text`` without a Markdown code fence around it (```json ... ```)."""
    if text.startswith("```") and text.endswith("```") and "\n" in text:
        return text[text.index("\n") + 1 : -3]
    return text


def calls_in_text(text: str, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a reply's text holds when the text is nothing but a JSON object (or a list
    of them, optionally in a code fence) each naming an offered tool (``name``) with an object
    of ``arguments`` (or ``parameters``); else none."""
    text = text.strip()
    if len(text) > 20_000 or not text:
        return []
    try:
        value = json.loads(_unfenced(text))
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    calls: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if not isinstance(item, dict) or item.get("name") not in offered:
            return []
        arguments = item.get("arguments", item.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                return []
        if not isinstance(arguments, dict):
            return []
        calls.append((str(item["name"]), arguments))
    return calls


def _offered(kwargs: dict[str, Any]) -> set[str]:
    names = set()
    for tool in kwargs.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.add(str(function["name"]))
    return names


def _read_text_calls(response: ChatResponse, kwargs: dict[str, Any]) -> ChatResponse:
    """``response`` with the calls its text holds (:func:`calls_in_text`) as tool-call blocks,
    when tools were offered and the server returned no call."""
    message = response.message
    if not kwargs.get("tools") or message.additional_kwargs.get("tool_calls"):
        return response
    if any(isinstance(b, ToolCallBlock) for b in message.blocks):
        return response
    calls = calls_in_text(message.content or "", _offered(kwargs))
    if calls:
        message.blocks = [
            ToolCallBlock(tool_call_id=f"call_text_{n}", tool_name=name, tool_kwargs=arguments)
            for n, (name, arguments) in enumerate(calls)
        ]
    return response


def _without_tools(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k not in ("tools", "tool_choice",
                                                          "parallel_tool_calls")}  # fmt: skip


class ServerLLM(OpenAILike):
    """``OpenAILike`` for a chat-completions server: ReAct stop sequences, request shapes
    strict servers accept, and one-sentence :class:`LLMServerError` errors."""

    agent_mode: str = Field("react", description="The agent mode it serves (for its errors).")
    tool_result_role: ToolResultRole = Field(
        "tool", description="How tool results are sent back: 'tool' messages or 'user' ones."
    )
    response_format: ResponseFormat = Field(
        "auto", description="How a structured reply is asked for (see the module docstring)."
    )
    _formats: list[ResponseFormat] | None = PrivateAttr(None)

    def __init__(self, **kwargs: Any) -> None:
        """``transport`` and ``async_transport`` replace the network under the reshaping
        (tests pass ``httpx.MockTransport``)."""
        role = kwargs.get("tool_result_role", "tool")
        timeout = kwargs.get("timeout", 120.0)
        sync = kwargs.pop("transport", None) or httpx.HTTPTransport()
        conc = kwargs.pop("async_transport", None) or httpx.AsyncHTTPTransport()
        kwargs.setdefault(
            "http_client", httpx.Client(transport=ReshapingTransport(sync, role), timeout=timeout)
        )
        kwargs.setdefault(
            "async_http_client",
            httpx.AsyncClient(transport=AsyncReshapingTransport(conc, role), timeout=timeout),
        )
        super().__init__(**kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "toolrag_server_llm"

    def complete_json(self, prompt: str, schema: dict[str, Any], name: str) -> CompletionResponse:
        """A completion held to ``schema`` where the server can hold it: the formats of
        ``response_format`` in turn, a refused one dropped for the rest of this LLM's life."""
        if self._formats is None:
            auto = self.response_format == "auto"
            self._formats = list(_FORMATS) if auto else [self.response_format]
        while True:
            kind = self._formats[0]
            body = response_format_body(kind, schema, name)
            try:
                return self.complete(prompt, **({"response_format": body} if body else {}))
            except LLMServerError as exc:
                status = _refused(exc)
                if body is None or status is None:
                    raise
                if len(self._formats) == 1:  # set by hand (auto ends with "none", no body)
                    raise LLMServerError(
                        f"The LLM server at {self.api_base} refused response_format "
                        f"{kind!r} (HTTP {status}).",
                        hint="Set TOOLRAG_RESPONSE_FORMAT=auto: it uses the first format the "
                        "server accepts, or none.",
                    ) from exc
                if self._formats[0] == kind:  # another thread may have dropped it already
                    self._formats.pop(0)  # this server does not take it: the next one

    def _error(self, exc: Exception, messages: Sequence[ChatMessage], kw: dict[str, Any]) -> Any:
        import openai

        if not isinstance(exc, openai.OpenAIError):
            return exc
        return server_error(
            exc,
            api_base=str(self.api_base),
            mode=self.agent_mode,
            tools=_uses_tools(messages, kw),
        )

    def _chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        try:
            response = _read_text_calls(super()._chat(messages, **kwargs), kwargs)
            if _silent(response, kwargs):
                response = super()._chat(messages, **_without_tools(kwargs))
            return response
        except Exception as exc:
            raise self._error(exc, messages, kwargs) from exc

    async def _achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        try:
            response = _read_text_calls(await super()._achat(messages, **kwargs), kwargs)
            if _silent(response, kwargs):
                response = await super()._achat(messages, **_without_tools(kwargs))
            return response
        except Exception as exc:
            raise self._error(exc, messages, kwargs) from exc

    def _stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        inner = super()._stream_chat(messages, **kwargs)

        def gen() -> ChatResponseGen:
            try:
                yield from inner
            except Exception as exc:
                raise self._error(exc, messages, kwargs) from exc

        return gen()

    async def _astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        try:
            inner = await super()._astream_chat(messages, **kwargs)
        except Exception as exc:
            raise self._error(exc, messages, kwargs) from exc

        async def gen() -> ChatResponseAsyncGen:
            try:
                async for chunk in inner:
                    yield chunk
            except Exception as exc:
                raise self._error(exc, messages, kwargs) from exc

        return gen()
