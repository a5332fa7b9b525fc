"""The agent's tools, each one a door into the :class:`~toolrag.guard.ToolGuard`.

Every tool the workflow agent can call is a ``FunctionTool`` with the original name, description
and schema whose body asks the guard to run the real tool. A ``delete`` or ``external`` call first
waits in the workflow: it emits :class:`ApprovalRequired` (an ``InputRequiredEvent``) and resumes
on the ``HumanResponseEvent`` the caller sends back (:func:`toolrag.agent.loop.run_agent` answers it
with the ``approve`` callback, the CLI prompt or ``--approve``/``--deny``). Write calls get an
idempotency key derived from the run id and the step (of the first identical write in the run).
A call whose arguments hold an identifier or a shown name that neither the question nor what the
run has read since gives is refused once (:mod:`toolrag.guard.grounding.calls`), and a companion
call (arithmetic) with numbers or dates nothing gave is refused
(:mod:`toolrag.guard.grounding.read_values`). Before both, a value outside a parameter's listed
values is written as the listed value it stands for, or left out of an optional parameter
(:mod:`toolrag.guard.grounding.choices`).
"""

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.tools import BaseTool, FunctionTool, ToolMetadata
from workflows import Context
from workflows.events import HumanResponseEvent, InputRequiredEvent

from toolrag.guard.executor import ToolGuard
from toolrag.guard.grounding.calls import ground_call
from toolrag.guard.grounding.choices import fit_choices
from toolrag.guard.grounding.copied import drop_copied_filters
from toolrag.guard.grounding.decision import RouteDecision, ToolCallSpec
from toolrag.guard.grounding.narrow import call_with_named_filters
from toolrag.guard.grounding.read_values import unread_refusal, unread_values
from toolrag.guard.grounding.widen import without_invented_dates
from toolrag.guard.idempotency import args_hash
from toolrag.tools.prompting import tool_schema
from toolrag.tools.result import ToolResult

YES = frozenset({"y", "yes", "approve", "approved", "true", "ok"})


class ApprovalRequired(InputRequiredEvent):
    """A gated call waits for a person: ``request`` is the ApprovalRequest as a dict."""

    request: dict[str, Any]
    waiter: str


@dataclass
class RunState:
    """One agent run: its id, the question it answers (with a chat's earlier turns), and the
    steps (guarded calls) finished so far."""

    run_id: str = field(default_factory=lambda: f"run-{uuid.uuid4().hex[:12]}")
    steps: int = 0
    question: str = ""
    write_keys: dict[tuple[str, str], str] = field(default_factory=dict)
    # what the model has read since the question (tool results, a chat's earlier turns): a
    # value found there grounds an argument (toolrag.guard.grounding.calls)
    seen: list[str] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)  # calls refused once for ungrounded values
    # the example questions the model was shown (the router's, which the agent's prompt
    # continues): a filter copied from one of them is left out (toolrag.guard.grounding.copied)
    shown: list[str] = field(default_factory=list)
    # every tool the run may offer, by name: a description that pairs a code with a name the
    # question uses ("code (CUST-103) or name (Fernwood Garden Center)") grounds that code
    tools: dict[str, BaseTool] = field(default_factory=dict)
    # the same tools behind the guard, by name (what the agent's FunctionTools run): a call to
    # a made-up name that means one of them runs through the same checks
    guarded: dict[str, Callable[..., Awaitable[ToolResult]]] = field(default_factory=dict)

    def write_key(self, name: str, arguments: dict[str, Any], step: int) -> str:
        """The run id and the step of the first identical write in this run: a model that
        repeats a write gets the stored result instead of a second effect."""
        return self.write_keys.setdefault(
            (name, args_hash(arguments)), f"{self.run_id}:{step}:{name}"
        )


def guarded_tool(guard: ToolGuard, tool: BaseTool, run: RunState) -> FunctionTool:
    """``tool`` behind ``guard``, for one run of the workflow agent."""
    name = tool.metadata.get_name()

    async def call(ctx: Context, **kwargs: Any) -> ToolResult:
        step = run.steps + 1  # counted when a call finishes: a replayed step keeps its number
        fitted = fit_choices(tool_schema(tool), kwargs)
        named = guard.vocabulary.named_ids(run.question) if guard.vocabulary else []
        grounded = ground_call(
            tool,
            fitted.arguments,
            question=run.question,
            seen="\n".join([*run.seen, *named]),  # ids the question gives by a name too
            refused=run.refused,
            shown=run.tools,
        )
        if grounded.refusal is not None and guard.permitted(name):
            run.steps = step
            return guard.refuse(name, kwargs, grounded.refusal, run_id=run.run_id)
        card = guard.card(name)
        copied: list[str] = []
        if run.shown and card is not None and card.side_effect == "read":
            one = RouteDecision(
                action="call_tools",
                calls=[ToolCallSpec(tool=name, arguments=dict(grounded.arguments))],
            )
            copied = drop_copied_filters(
                run.question, one, run.shown, {name: tool}, guard.vocabulary
            )
            if copied:
                grounded = grounded._replace(arguments=one.calls[0].arguments)
        if card is not None and card.companion and guard.permitted(name):
            unread = unread_values(kwargs, run.question, "\n".join(run.seen))
            if unread:  # arithmetic over numbers nothing gave: read them first
                run.steps = step
                return guard.refuse(name, kwargs, unread_refusal(name, unread), run_id=run.run_id)
        written, kwargs = kwargs, grounded.arguments
        approved: bool | None = None
        if guard.permitted(name) and guard.needs_approval(name):
            request = guard.approval_request(name, kwargs, run.run_id)
            waiter = f"approve:{run.run_id}:{step}:{name}:{args_hash(kwargs)}"
            response = await ctx.wait_for_event(
                HumanResponseEvent,
                waiter_event=ApprovalRequired(
                    prefix=request.prompt(), request=request.model_dump(), waiter=waiter
                ),
                waiter_id=waiter,
                timeout=None,
            )
            approved = str(response.response).strip().lower() in YES
        if card is not None and card.side_effect == "write" and not kwargs.get("idempotency_key"):
            kwargs = {**kwargs, "idempotency_key": run.write_key(name, kwargs, step)}
        narrowed = await call_with_named_filters(
            guard, name, kwargs, question=run.question, run_id=run.run_id, step=step,
            approved=approved,
        )  # fmt: skip
        result, kwargs = narrowed.result, narrowed.arguments
        run.steps = step + narrowed.steps - 1
        wider = await without_invented_dates(
            guard, name, kwargs, result, question=run.question, run_id=run.run_id,
            step=run.steps + 1,
        )  # fmt: skip
        if wider is not None:
            run.steps += 1
            result = wider
        run.seen.append(result.render(max_chars=4000))
        ran = {k: v for k, v in kwargs.items() if k != "idempotency_key"}
        if ran != {k: v for k, v in written.items() if k != "idempotency_key"}:
            result.ran_with = ran
        left_out = f"Left out: {'; '.join(copied)}." if copied else None
        notes = (fitted.note, grounded.note, left_out)
        return result.with_note(" ".join(n for n in notes if n) or None)

    run.guarded[name] = call
    return FunctionTool(async_fn=call, metadata=tool.metadata)


def meant_tool(
    guard: ToolGuard, arguments: dict[str, Any], run: RunState
) -> tuple[str, dict[str, Any]] | None:
    """The tool of ``run`` that a call to a made-up name meant, and the arguments for it: the
    tool named inside a call written in the router's form (``{"tool": NAME, "arguments":
    {...}}``), else the one read tool whose parameters take every argument given. None when
    the call gives no argument, or when no read tool or several take them all."""
    inner, wrapped = arguments.get("tool"), arguments.get("arguments", {})
    if isinstance(inner, str) and inner in run.guarded and isinstance(wrapped, dict):
        return inner, wrapped
    fits = taking(guard, arguments, run)
    return (fits[0], dict(arguments)) if len(fits) == 1 else None


def _parameters(tool: BaseTool) -> set[str]:
    return set((tool_schema(tool) or {}).get("properties") or {})


def _reads(guard: ToolGuard, name: str) -> bool:
    card = guard.card(name)
    return card is None or card.side_effect == "read"


def taking(guard: ToolGuard, arguments: dict[str, Any], run: RunState) -> list[str]:
    """The permitted read tools of ``run`` whose parameters take every argument in
    ``arguments``, the closest fit first (the fewest parameters left out); [] for no
    arguments. A write, delete or external tool is never guessed from arguments."""
    if not arguments:
        return []
    fits = [
        name
        for name, tool in run.tools.items()
        if name in run.guarded
        and guard.permitted(name)
        and _reads(guard, name)
        and set(arguments) <= _parameters(tool)
    ]
    return sorted(fits, key=lambda n: len(_parameters(run.tools[n])))


def unknown_tool(guard: ToolGuard, name: str, run: RunState) -> FunctionTool:
    """A stand-in for a tool name that does not exist: calling it returns the guard's
    ``UNKNOWN_TOOL`` result (audited like any call), naming the tools that take the call's
    arguments, else the closest real names.

    A call that says which tool it meant runs as a call of that tool, through the same checks
    (:func:`meant_tool`): one written in the router's JSON form (``Action: call_tools`` with
    ``{"tool": NAME, "arguments": {...}}``: a small model continuing the router's conversation
    imitates its reply), or one whose arguments only one tool takes (``Action: call`` with a
    search's arguments). Its result says so, and names the tool that ran (``ran_as``)."""

    async def call(ctx: Context, **kwargs: Any) -> ToolResult:
        meant = meant_tool(guard, kwargs, run)
        if meant is not None:
            inner, arguments = meant
            result = await run.guarded[inner](ctx, **arguments)
            result.ran_as, result.ran_as_arguments = inner, arguments
            return result.with_note(
                f"Ran as {inner}: there is no tool named {str(name)[:60]!r}; call {inner} "
                "by its own name."
            )
        result = await guard.acall(name, kwargs, run_id=run.run_id, step=run.steps + 1)
        fits = taking(guard, kwargs, run)
        if fits:
            listed = ", ".join(fits[:6])
            result.suggestion = f"The tools that take these arguments: {listed}."
        return result

    metadata = ToolMetadata(name=name, description="There is no tool by this name.")
    return FunctionTool(async_fn=call, metadata=metadata)


def guarded_tools(guard: ToolGuard, tools: list[BaseTool], run: RunState) -> list[BaseTool]:
    """The permitted ``tools``, each behind ``guard`` (the profile filters what is offered)."""
    permitted = [t for t in tools if guard.permitted(t.metadata.get_name())]
    run.tools.update({t.metadata.get_name(): t for t in permitted})
    return [guarded_tool(guard, t, run) for t in permitted]
