"""``ToolGuard``: the one door every tool call goes through.

In order, for each call: resolve the tool by name (an unknown name gets the closest real ones),
check the agent profile, bound and validate the arguments against the tool's schema, stop
``delete`` and ``external`` calls at the approval gate, deduplicate ``write`` calls by
idempotency key, run the tool under its timeout (its card's ``timeout_s``, else the default;
a :class:`~toolrag.tools.self_timed.SelfTimedTool`, or a tool named in ``inline_tools``, runs
inline under its own deadline), cap the result, and write one audit record.
Whatever happens comes back as a :class:`~toolrag.tools.result.ToolResult`; nothing raises
into the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import logging
import re
import time
import uuid
from collections.abc import Collection, Sequence
from typing import Any

from llama_index.core.tools import BaseTool

from toolrag.cards.card import ToolCard
from toolrag.guard.audit import AuditLog
from toolrag.guard.grounding.filters import Vocabulary
from toolrag.guard.idempotency import IdempotencyStore, args_hash
from toolrag.guard.policy import GATED, ApprovalRequest, Approver
from toolrag.guard.redact import redact
from toolrag.guard.timeouts import run_with_timeout
from toolrag.profiles import AgentProfile
from toolrag.tools.approval import approved
from toolrag.tools.base import check_arguments
from toolrag.tools.result import ErrorCode, ToolResult
from toolrag.tools.self_timed import is_self_timed

log = logging.getLogger(__name__)

MAX_ARGUMENT_CHARS = 20_000
MAX_ARGUMENT_DEPTH = 32
_KEY = re.compile(r"[\x21-\x7e]{1,200}")  # it travels in an HTTP header: printable ASCII


def argument_size(arguments: Any, limit: int = MAX_ARGUMENT_CHARS) -> tuple[int, int]:
    """About how many characters of JSON ``arguments`` take, and how deep they nest.

    Iterative, and it stops as soon as either passes its limit (``limit`` characters,
    ``MAX_ARGUMENT_DEPTH`` levels), so a 5 MB or 10,000-level argument costs no more than one
    at the limit: ``json.dumps`` would serialise all of it, or overflow the stack first.
    """
    size, deepest = 0, 0
    stack: list[tuple[Any, int]] = [(arguments, 1)]
    while stack and size <= limit and deepest <= MAX_ARGUMENT_DEPTH:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(value, dict):
            size += 2 + 2 * len(value)
            for key, item in value.items():
                size += len(str(key)) + 2
                stack.append((item, depth + 1))
                if size > limit:
                    break
        elif isinstance(value, list | tuple):
            size += 2 + len(value)
            stack.extend((item, depth + 1) for item in value[: limit + 1])
        elif isinstance(value, str):
            size += len(value) + 2
        else:
            size += value.bit_length() // 3 + 2 if isinstance(value, int) else 24
    return size, deepest


def oversized(name: str, arguments: Any) -> ToolResult | None:
    """The ``TOO_LARGE`` refusal for ``arguments`` nested deeper than ``MAX_ARGUMENT_DEPTH``
    levels or over ``MAX_ARGUMENT_CHARS`` characters of JSON, else None. Measured by
    :func:`argument_size`, so it costs no more for a 5 MB payload than for one at the limit;
    the guard and the MCP server's door share it."""
    size, depth = argument_size(arguments)
    if depth > MAX_ARGUMENT_DEPTH:
        return ToolResult.fail(
            ErrorCode.TOO_LARGE,
            f"The arguments of {name} nest more than {MAX_ARGUMENT_DEPTH} levels deep.",
            suggestion="Pass flat arguments: names, ids and filters.",
        )
    if size > MAX_ARGUMENT_CHARS:
        return ToolResult.fail(
            ErrorCode.TOO_LARGE,
            f"The arguments of {name} are over {MAX_ARGUMENT_CHARS:,} characters of JSON, "
            "the limit.",
            suggestion="Pass short arguments: names, ids and filters, not documents.",
        )
    return None


MAX_RESULT_CHARS = 200_000


def _as_result(raw: Any, is_error: bool, content: str) -> ToolResult:
    if isinstance(raw, ToolResult):
        return raw
    if is_error:
        return ToolResult.fail(ErrorCode.INTERNAL_ERROR, content[:2000] or "The tool failed.")
    return ToolResult.ok(raw if raw is not None else content)


def _cap(result: ToolResult, max_chars: int) -> ToolResult:
    """A result whose data is over ``max_chars`` of JSON is cut there and flagged."""
    if result.data is None:
        return result
    text = json.dumps(result.data, default=str, ensure_ascii=False)
    if len(text) <= max_chars:
        return result
    capped = result.model_copy(
        update={
            "data": text[:max_chars],
            "truncated": True,
            "suggestion": f"The result was {len(text):,} characters and was cut at "
            f"{max_chars:,}: ask for less (filter, aggregate or lower the limit).",
        }
    )
    return capped


class ToolGuard:
    """Executes tools by name for one agent, with its profile, approver and stores."""

    def __init__(
        self,
        tools: Sequence[BaseTool],
        cards: Sequence[ToolCard],
        *,
        audit: AuditLog | None = None,
        store: IdempotencyStore | None = None,
        approver: Approver | None = None,
        profile: AgentProfile | None = None,
        agent: str = "toolrag",
        default_timeout_s: float = 10.0,
        inline_tools: Collection[str] = (),
        max_result_chars: int = MAX_RESULT_CHARS,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        by_name = {c.name: c for c in cards}
        self._tools: dict[str, tuple[BaseTool, ToolCard]] = {}
        for tool in tools:
            name = tool.metadata.get_name()
            card = by_name.get(name) or ToolCard(name=name, description=tool.metadata.description)
            self._tools[name] = (tool, card)
        self.audit = audit
        self.store = store
        self.approver = approver
        self.profile = profile or AgentProfile()
        self.agent = agent
        self.default_timeout_s = default_timeout_s
        # known filter values (projects, disciplines...): read calls get the filters the
        # question names (toolrag.guard.grounding.narrow)
        self.vocabulary = vocabulary
        self.inline_tools = set(inline_tools)
        self.max_result_chars = max_result_chars

    # --- what this agent may use ------------------------------------------------------------------
    def card(self, name: str) -> ToolCard | None:
        entry = self._tools.get(name)
        return entry[1] if entry else None

    def permitted(self, name: str) -> bool:
        entry = self._tools.get(name)
        return entry is not None and self.profile.permits(entry[1])

    def permitted_names(self) -> list[str]:
        return [n for n in self._tools if self.permitted(n)]

    def needs_approval(self, name: str) -> bool:
        card = self.card(name)
        return card is not None and card.side_effect in GATED

    def approval_request(
        self, name: str, arguments: dict[str, Any], run_id: str = ""
    ) -> ApprovalRequest:
        card = self.card(name) or ToolCard(name=name)
        return ApprovalRequest(
            tool=name,
            side_effect=card.side_effect,
            arguments=redact(arguments, card.sensitive),
            description=card.description.split(". ")[0][:200],
            run_id=run_id,
        )

    # --- calling ----------------------------------------------------------------------------------
    async def acall(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        run_id: str = "",
        step: int = 0,
        approved: bool | None = None,
    ) -> ToolResult:
        return await asyncio.to_thread(
            self.call, name, arguments, run_id=run_id, step=step, approved=approved
        )

    def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        run_id: str = "",
        step: int = 0,
        approved: bool | None = None,
    ) -> ToolResult:
        """Run ``name`` with ``arguments`` through every check; always a ToolResult.

        ``approved``: a person's decision taken elsewhere (the workflow's
        ``HumanResponseEvent``); None asks the guard's ``approver``, and without one a gated
        call is refused.
        """
        started = time.perf_counter()
        name = name if isinstance(name, str) else repr(name)[:100]
        if arguments is not None and not isinstance(arguments, dict):
            kind = type(arguments).__name__
            refused = ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                f"The arguments of {name[:100]} must be a JSON object; got a {kind}.",
                suggestion='Pass the arguments as an object, e.g. {"name": value}.',
            )
            self._record(name, {"arguments": arguments}, "refused", refused, run_id, started)
            return refused
        arguments = dict(arguments or {})
        entry = self._tools.get(name)
        try:
            status, result = self._call(entry, name, arguments, run_id, step, approved)
        except Exception as exc:  # a check that raised: the caller still gets a result
            log.exception("the guard failed on a call of %s", name[:100])
            status, result = "error", self._crashed(name[:100], exc)
        self._record(name, arguments, status, result, run_id, started)
        return result

    def refuse(
        self, name: str, arguments: dict[str, Any], result: ToolResult, *, run_id: str = ""
    ) -> ToolResult:
        """Audit a call of ``name`` that a check before the guard stopped (an argument the
        question never gave, :mod:`toolrag.guard.function_tools`) as refused, and return ``result``,
        the error that check gives the model. The tool does not run."""
        self._record(name, dict(arguments), "refused", result, run_id, time.perf_counter())
        return result

    def _record(
        self,
        name: str,
        arguments: dict[str, Any],
        status: str,
        result: ToolResult,
        run_id: str,
        started: float,
    ) -> None:
        entry = self._tools.get(name)
        card = entry[1] if entry else ToolCard(name=str(name)[:100], version="-")
        if self.audit is not None:
            try:
                self.audit.record(
                    agent=f"{self.agent}/{self.profile.name}",
                    run_id=run_id,
                    tool=card.name,
                    version=card.version,
                    side_effect=card.side_effect,
                    arguments=arguments,
                    status=status,
                    error_code=result.error_code.value if result.error_code else None,
                    latency_ms=(time.perf_counter() - started) * 1000,
                    sensitive=tuple(card.sensitive),
                )
            except Exception:  # an audit failure is logged, never hidden behind a result
                log.exception("audit record for %s failed", name)

    def _call(
        self,
        entry: tuple[BaseTool, ToolCard] | None,
        name: str,
        arguments: dict[str, Any],
        run_id: str,
        step: int,
        approved: bool | None,
    ) -> tuple[str, ToolResult]:
        if entry is None or not self.profile.permits(entry[1]):
            return "refused", self._unknown(name, known=entry is not None)
        tool, card = entry
        refusal = oversized(name, arguments)
        if refusal is not None:
            return "refused", refusal
        checked = self._validate(tool, card, arguments)
        if isinstance(checked, ToolResult):
            return "refused", checked
        if card.side_effect in GATED:
            decision = approved
            if decision is None and self.approver is not None:
                try:
                    decision = bool(self.approver(self.approval_request(name, arguments, run_id)))
                except Exception:
                    log.exception("approver failed for %s", name)
                    decision = False
            if not decision:
                return "denied", ToolResult.fail(
                    ErrorCode.APPROVAL_DENIED,
                    f"{name} is a {card.side_effect} action and a person did not approve "
                    "this call, so it did not run.",
                    suggestion="Tell the user what you wanted to do and why; do not retry.",
                    recoverable=False,
                )
        key = None
        if card.side_effect == "write" and self.store is not None:
            key = str(arguments.get("idempotency_key") or "")
            if key and not _KEY.fullmatch(key):
                return "refused", ToolResult.fail(
                    ErrorCode.INVALID_ARGUMENT,
                    "An idempotency_key is 1-200 printable ASCII characters without spaces.",
                    suggestion="Use a UUID or letters, digits and - _ . : only.",
                )
            if not key:  # derived from the run, the step and the arguments: only a retry of
                # this very request replays; without a run every call is its own request
                digest = args_hash(checked)
                key = f"{run_id}:{step}:{name}:{digest}" if run_id else f"adhoc:{uuid.uuid4()}"
            timeout = card.timeout_s or self.default_timeout_s
            claim = self.store.claim(key, name, checked, wait_s=timeout + 5)
            if claim.conflict:
                return "refused", ToolResult.fail(
                    ErrorCode.CONFLICT,
                    claim.conflict,
                    suggestion="Use a new idempotency_key for a different write.",
                    recoverable=False,
                )
            if claim.replay is not None:
                replayed = ToolResult.model_validate_json(claim.replay)
                replayed.idempotent_replay = True
                return "replayed", replayed
            schema = tool.metadata.fn_schema
            if schema is not None and "idempotency_key" in schema.model_fields:
                checked["idempotency_key"] = key  # the service can deduplicate too
            else:
                checked.pop("idempotency_key", None)
        result = self._run(tool, card, checked)
        if key is not None and self.store is not None:
            if result.success:
                self.store.complete(key, result.model_dump_json())
            else:
                self.store.release(key)
        status = "ok" if result.success else "error"
        if result.error_code == ErrorCode.TIMEOUT:
            status = "timeout"
        return status, _cap(result, self.max_result_chars)

    def _unknown(self, name: str, known: bool) -> ToolResult:
        names = self.permitted_names()
        close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.4)
        listing = ", ".join(close or names[:8])
        if known:
            return ToolResult.fail(
                ErrorCode.FORBIDDEN,
                f"The tool {name!r} is not permitted for the profile {self.profile.name!r}.",
                suggestion=f"Use one of: {listing}." if listing else "Answer without it.",
                recoverable=False,
            )
        return ToolResult.fail(
            ErrorCode.UNKNOWN_TOOL,
            f"There is no tool named {str(name)[:100]!r}.",
            suggestion=f"Did you mean: {listing}?" if listing else "Answer without a tool.",
        )

    @staticmethod
    def _validate(
        tool: BaseTool, card: ToolCard, arguments: dict[str, Any]
    ) -> dict[str, Any] | ToolResult:
        """The arguments checked against the tool's schema (:func:`check_arguments`); a
        write may also carry the guard's own ``idempotency_key``."""
        schema = tool.metadata.fn_schema
        if schema is None:
            return arguments
        extra = ("idempotency_key",) if card.side_effect == "write" else ()
        return check_arguments(tool.metadata.get_name(), schema, arguments, extra)

    def _run(self, tool: BaseTool, card: ToolCard, arguments: dict[str, Any]) -> ToolResult:
        timeout = card.timeout_s or self.default_timeout_s

        def invoke() -> ToolResult:
            # a gated tool checks for itself that this very call was approved
            with approved(card.name) if card.side_effect in GATED else contextlib.nullcontext():
                output = tool(**arguments)
            return _as_result(output.raw_output, output.is_error, str(output.content or ""))

        if is_self_timed(tool) or card.name in self.inline_tools:  # it keeps its own deadline
            try:
                return invoke()
            except Exception as exc:
                return self._crashed(card.name, exc)
        outcome = run_with_timeout(invoke, timeout)
        if outcome.timed_out:
            return ToolResult.fail(
                ErrorCode.TIMEOUT,
                f"{card.name} did not finish within {timeout:g} s and was stopped.",
                suggestion="Try narrower arguments, or another tool.",
            )
        if outcome.error is not None:
            return self._crashed(card.name, outcome.error)
        result: ToolResult = outcome.value
        return result

    @staticmethod
    def _crashed(name: str, exc: BaseException) -> ToolResult:
        log.warning("tool %s raised %s: %s", name, type(exc).__name__, exc)
        return ToolResult.fail(
            ErrorCode.INTERNAL_ERROR,
            f"{name} failed: {type(exc).__name__}: {str(exc)[:300]}",
            suggestion="Try different arguments or another tool.",
        )
