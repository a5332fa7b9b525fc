"""The few-shot router: question + retrieved tools -> validated tool calls, a direct answer, or a
clarifying question.

- Structured output: a JSON-schema grammar for llama.cpp (the reply cannot be anything but a
  ``RouteDecision`` whose calls are the offered tools', each with its own arguments:
  :mod:`toolrag.routing.call_schema`), the request's ``response_format`` with the same schema for an
  OpenAI-compatible server (``ServerLLM.complete_json``: the first format the server accepts),
  ``structured_predict`` (function calling / structured outputs) for function-calling LLMs
  such as OpenAI's, and a parsed JSON reply for any other LLM.
- Few-shot examples, 5-10 per question, from the :class:`ExampleStore`: ``dynamic`` picks
  among examples that use the offered tools, most by the shape of the request (its names and
  ids masked) and two by the whole question, ``static`` the same first
  example of each offered tool for every question, ``none`` no examples. An example is shown
  as the whole JSON reply only when its calls would pass the checks below (and carry arguments
  where the tool takes any); an example known only by its tools (a card's example query, an
  expected-arguments subset that lacks a required one) shows just its tools, so the model never
  copies a call with missing arguments.
- Every call is checked (the tool was offered, the arguments fit its schema, every id or code
  in them is grounded in the question: :mod:`toolrag.guard.grounding.values`); a decision with
  errors gets one repair round in which the model sees the errors.
- ``arun`` also executes the calls through the guard, independent calls in parallel.
- With no tools offered (the retriever's gate or floor said none fits), there is nothing to
  route among: the model answers the question directly (:data:`NO_TOOL`), one short call.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, Literal

from llama_index.core.llms import LLM, CompletionResponse
from llama_index.core.prompts import PromptTemplate
from llama_index.core.tools import BaseTool
from pydantic import ValidationError

from toolrag.guard import ToolGuard
from toolrag.guard.grounding.copied import drop_copied_filters
from toolrag.guard.grounding.filters import Vocabulary
from toolrag.guard.grounding.narrow import Narrowed, call_with_named_filters
from toolrag.guard.grounding.read_values import unread_refusal, unread_values
from toolrag.guard.grounding.values import (
    Ungrounded,
    drop_optional,
    ground_codes,
    ungrounded_values,
)
from toolrag.guard.grounding.widen import without_invented_dates
from toolrag.models.llms import takes_grammar
from toolrag.models.usage import cached_tokens, token_counts
from toolrag.retrieval.agent_retriever import MAX_PARTS
from toolrag.retrieval.steps import sub_queries
from toolrag.routing.call_schema import decision_schema, ordered_arguments
from toolrag.routing.examples import Example, ExampleStore
from toolrag.routing.models import RouteDecision, RouteResult, ToolCallSpec
from toolrag.text import bounded
from toolrag.tools.prompting import (
    NO_TOOL_FITS,
    ToolOrder,
    describe_args,
    listed_tools,
    tool_schema,
)

ExampleMode = Literal["none", "static", "dynamic"]

INSTRUCTIONS = (
    "You route a question to tools. Reply with one JSON object and nothing else:\n"
    '{{"action": "call_tools" | "answer_directly" | "ask_clarification", '
    '"calls": [{{"tool": "<name>", "arguments": {{...}}}}], "message": "<text>"}}\n'
    "- call_tools: the listed tools can answer. Give every call the question needs, each with "
    "the tool's exact name and its own argument names; calls that do not depend on each other "
    "run in parallel.\n"
    "- answer_directly: no tool is needed (greetings, general knowledge); put the answer in "
    "message.\n"
    "- ask_clarification: the question is too vague to act on; put your question in message.\n"
    "\nTools:\n{tools}\n{examples}\nQuestion: {question}\n{parts}JSON:"
)

# A question that asks several things (:func:`toolrag.retrieval.steps.sub_queries`) gets its
# parts listed after it: a small model otherwise calls a tool for the first part and stops.
PARTS = "This question asks {n} things; give a call for each:\n{parts}\n"

# No tool was offered (the retriever's gate or floor said none fits, and none is pinned):
# there is nothing to route among, so the model answers the question itself.
NO_TOOL = NO_TOOL_FITS + "\nQuestion: {question}\nAnswer:"

REPAIR = """{prompt} {reply}

That JSON has problems:
{errors}
Fix them, or call another listed tool if this one cannot answer the question. Reply with the
corrected JSON object for this question, not for an example's:
Question: {question}
JSON:"""

_grammar_lock = threading.Lock()


def _tool_block(tool: BaseTool) -> str:
    meta = tool.metadata
    schema = tool_schema(tool) or {}
    return f"- {meta.get_name()}: {meta.description.strip()}\n{describe_args(schema)}"


def _valid_call(n: int, call: ToolCallSpec, tools: dict[str, BaseTool]) -> bool:
    """Whether ``call`` is one the router would accept: an offered tool, arguments that fit its
    schema, and arguments at all when the tool takes any (an example known only by its tool,
    such as a card's example query, has none)."""
    tool = tools.get(call.tool)
    if tool is None:
        return False
    takes = bool((tool_schema(tool) or {}).get("properties"))
    return (bool(call.arguments) or not takes) and not _argument_errors(n, call, tool)


def _example_block(example: Example, tools: dict[str, BaseTool]) -> str:
    """An example as the reply the router wants: the whole JSON decision when every call in it
    is valid; otherwise only its tools, so the model never sees a call with missing or wrong
    arguments as the thing to copy."""
    if not all(_valid_call(n, c, tools) for n, c in enumerate(example.calls)):
        return f"Question: {example.query}\nTools: {', '.join(c.tool for c in example.calls)}"
    calls = [  # in the order the grammar admits them (:func:`ordered_arguments`)
        c.model_copy(update={"arguments": ordered_arguments(c.arguments, tools.get(c.tool))})
        for c in example.calls
    ]
    decision = RouteDecision(action="call_tools" if calls else "answer_directly", calls=calls)
    return f"Question: {example.query}\nJSON: {decision.model_dump_json(exclude_defaults=False)}"


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks several things (at most ``MAX_PARTS``); [] for a
    question of one part."""
    parts = sub_queries(question)[:MAX_PARTS]
    return parts if len(parts) > 1 else []


def parts_block(question: str) -> str:
    """The parts of a question that asks several things, listed for the router; "" for a
    question of one part."""
    parts = question_parts(question)
    if not parts:
        return ""
    listed = "\n".join(f"{n}. {part}" for n, part in enumerate(parts, start=1))
    return PARTS.format(n=len(parts), parts=listed)


_CALL_ERROR = re.compile(r"^calls\[(\d+)\]")


def keep_valid_calls(
    decision: RouteDecision, errors: list[str], found: Sequence[Ungrounded], notes: list[str]
) -> list[str]:
    """Leave out of ``decision`` the calls that ``errors`` name (``calls[n]...``, and the
    ungrounded values ``found``) when at least one call has none, a note each in ``notes``;
    the errors that are left ([] when every error named a call that was left out)."""
    bad: dict[int, str] = {u.call: u.error for u in found}
    general = []
    for error in errors:
        match = _CALL_ERROR.match(error)
        if match is None:
            general.append(error)
        else:
            bad.setdefault(int(match.group(1)), error)
    if general or not bad or len(bad) >= len(decision.calls):
        return errors
    for n in sorted(bad, reverse=True):
        call = decision.calls.pop(n)
        notes.append(f"{call.tool} left out: {bad[n]}")
    return []


def drop_repeated_calls(decision: RouteDecision) -> list[str]:
    """Leave out each call that repeats an earlier one (the same tool and arguments); a note
    for each."""
    kept: list[ToolCallSpec] = []
    notes = []
    for call in decision.calls:
        if any(c.tool == call.tool and c.arguments == call.arguments for c in kept):
            notes.append(f"{call.tool}: a repeated call left out")
        else:
            kept.append(call)
    decision.calls = kept
    return notes


def _is_reply(block: str) -> bool:
    return "\nJSON: " in block


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in a reply (code fences and chatter around it allowed)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def check_decision(
    data: dict[str, Any] | None, tools: dict[str, BaseTool]
) -> tuple[RouteDecision | None, list[str]]:
    """Parse and validate one reply: the schema, the tool names, each call's arguments."""
    if data is None:
        return None, ["The reply is not a JSON object."]
    try:
        decision = RouteDecision.model_validate(data)
    except ValidationError as exc:
        return None, [
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()
        ]
    errors: list[str] = []
    if decision.action == "call_tools" and not decision.calls:
        errors.append("action is call_tools but calls is empty.")
    if decision.action != "call_tools" and not decision.message.strip():
        errors.append(f"action is {decision.action} but message is empty.")
    for n, call in enumerate(decision.calls):
        tool = tools.get(call.tool)
        if tool is None:
            errors.append(
                f"calls[{n}].tool: {call.tool!r} is not an offered tool; use one of "
                f"{', '.join(sorted(tools))}."
            )
            continue
        errors += _argument_errors(n, call, tool)
    return decision, errors


def _argument_errors(n: int, call: ToolCallSpec, tool: BaseTool) -> list[str]:
    """Unknown and missing arguments from the tool's JSON schema, then the types through its
    pydantic model when it has one."""
    schema = tool_schema(tool)
    if schema is None:  # a tool without a usable schema: nothing to check against
        return []
    props = schema.get("properties") or {}
    errors = []
    if props:
        errors += [
            f"calls[{n}].arguments.{k}: {call.tool} has no argument {k!r}; it takes "
            f"{', '.join(sorted(props))}."
            for k in call.arguments
            if k not in props
        ]
    errors += [
        f"calls[{n}].arguments.{k}: required by {call.tool} and missing."
        for k in schema.get("required") or []
        if k not in call.arguments
    ]
    model = tool.metadata.fn_schema
    if model is not None and model.model_fields and not errors:
        try:
            model.model_validate(call.arguments)
        except ValidationError as exc:
            errors += [
                f"calls[{n}].arguments.{'.'.join(map(str, e['loc']))}: {e['msg']}"
                for e in exc.errors()
            ]
    return errors


def _is_llama_cpp(llm: object) -> bool:
    """Whether ``llm`` is LlamaIndex's ``LlamaCPP`` (or a subclass: the local model's
    :class:`toolrag.models.local_llm.LocalLlamaCPP`), checked without importing the optional
    package: its completions take a llama.cpp grammar."""
    return any(cls.__name__ == "LlamaCPP" for cls in type(llm).__mro__)


def _counted(response: CompletionResponse, result: RouteResult | None) -> str:
    """The reply's text; its token usage (when the LLM reports it) added to ``result``."""
    raw: Any = response.raw
    dump = getattr(raw, "model_dump", None)
    if not isinstance(raw, dict) and callable(dump):
        raw = dump()  # an OpenAI-compatible client's response object
    usage = raw.get("usage") if isinstance(raw, dict) else None
    if result is not None and isinstance(usage, dict):
        prompt, completion = token_counts(raw)
        result.prompt_tokens += prompt
        result.completion_tokens += completion
        cached = cached_tokens(raw)
        if cached is not None:
            result.cached_prompt_tokens = (result.cached_prompt_tokens or 0) + cached
    return response.text


class Router:
    """Routes a question over a set of (retrieved) tools with few-shot examples."""

    def __init__(
        self,
        llm: LLM,
        examples: ExampleStore | None = None,
        mode: ExampleMode = "dynamic",
        k_examples: int = 8,
        max_repairs: int = 1,
        vocabulary: Vocabulary | None = None,
        tool_grammar: bool = True,
        tool_order: ToolOrder = "cache",
    ) -> None:
        """``vocabulary``: the known filter values and their names (the guard's), so that an
        id the question gives by name counts as given (:meth:`named_ids`). ``tool_grammar``:
        hold the reply to the offered tools' own schemas (:mod:`toolrag.routing.call_schema`);
        False holds it only to the generic decision schema. ``tool_order``: ``cache`` lists the
        offered tools in one fixed order (:func:`toolrag.tools.prompting.listed_tools`),
        ``relevance`` as the search ranked them."""
        self.tool_grammar = tool_grammar
        self.tool_order: ToolOrder = tool_order
        self.llm = llm
        self.vocabulary = vocabulary
        self.examples = examples
        self.mode: ExampleMode = mode if examples is not None else "none"
        self.k_examples = k_examples
        self.max_repairs = max_repairs

    def named_ids(self, question: str) -> list[str]:
        """The known ids the question gives by a name (:meth:`Vocabulary.named_ids`)."""
        return self.vocabulary.named_ids(question) if self.vocabulary is not None else []

    # --- examples ------------------------------------------------------------------------------
    def choose_examples(self, question: str, tools: Sequence[str]) -> list[tuple[str, Example]]:
        if self.examples is None or self.mode == "none":
            return []
        if self.mode == "dynamic":
            parts = question_parts(question)
            if parts:
                return self._examples_per_part(parts, tools)
            picked = self.examples.select(question, k=self.k_examples, tools=tools)
            return [(i, e) for i, e, _ in picked][::-1]  # the nearest last, beside the question
        chosen: list[tuple[str, Example]] = []
        pairs = sorted(zip(self.examples._ids, self.examples._examples, strict=True))
        for name in tools:  # static: each offered tool's first example, whatever the question
            first = next(((i, e) for i, e in pairs if e.tools == {name}), None)
            if first is not None:
                chosen.append(first)
        return chosen[: self.k_examples]

    def _examples_per_part(
        self, parts: Sequence[str], tools: Sequence[str]
    ) -> list[tuple[str, Example]]:
        """Examples for a question of several parts, chosen for each part on its own (an equal
        share of ``k_examples``, at least 2): chosen for the whole question, they follow the
        part that names the most (a project's name pulls that project's examples, of any
        tool), and the model then calls that tool for every part. Part by part, each part's
        nearest last; an example chosen for an earlier part is not shown twice."""
        assert self.examples is not None
        share = max(2, -(-self.k_examples // len(parts)))
        chosen: dict[str, Example] = {}
        for part in parts:
            picked = self.examples.select(part, k=share, tools=tools, k_named=1)
            for i, e, _ in picked[::-1]:
                chosen.setdefault(i, e)
        return list(chosen.items())

    def prompt(self, question: str, tools: Sequence[BaseTool], examples: Sequence[Example]) -> str:
        by_name = {t.metadata.get_name(): t for t in tools}
        # examples shown as whole replies last, beside the question (their order kept): the
        # model writes its reply in the form of the nearest one
        blocks = sorted((_example_block(e, by_name) for e in examples), key=_is_reply)
        block = "\n".join(blocks)
        return INSTRUCTIONS.format(
            tools="\n".join(b for _, b in listed_tools(tools, _tool_block, self.tool_order)),
            examples=f"\nExamples:\n{block}\n" if block else "",
            question=question,
            parts=parts_block(question),
        )

    def plan(
        self, question: str, tools: Sequence[BaseTool]
    ) -> tuple[list[tuple[str, Example]], str]:
        """The examples chosen for ``question`` over ``tools`` (id, example) and the prompt
        (with no tools, the direct-answer prompt and no examples)."""
        if not tools:
            return [], NO_TOOL.format(question=question)
        chosen = self.choose_examples(question, [t.metadata.get_name() for t in tools])
        return chosen, self.prompt(question, tools, [e for _, e in chosen])

    # --- the model -----------------------------------------------------------------------------
    def _ask(
        self,
        prompt: str,
        result: RouteResult | None = None,
        min_calls: int = 0,
        tools: Sequence[BaseTool] = (),
    ) -> str:
        """The model's reply to ``prompt``, held (where the LLM takes a grammar or a JSON
        schema) to calls of the offered ``tools`` with their own arguments
        (:mod:`toolrag.routing.call_schema`); with ``min_calls``, to ``call_tools`` with at
        least that many calls."""
        llm = self.llm
        schema = decision_schema(min_calls, tools if self.tool_grammar else ())
        complete_json = getattr(llm, "complete_json", None)
        if callable(complete_json):  # a chat-completions server: its response_format
            return _counted(complete_json(prompt, schema, "RouteDecision"), result)
        if getattr(llm.metadata, "is_function_calling_model", False):
            try:
                decision = llm.structured_predict(RouteDecision, PromptTemplate("{p}"), p=prompt)
                return decision.model_dump_json()
            except (ValueError, ValidationError):
                pass  # fall back to a plain reply, parsed below
        generate = getattr(llm, "generate_kwargs", None)
        local = takes_grammar(llm)
        if local or (isinstance(generate, dict) and _is_llama_cpp(llm)):
            from llama_cpp import LlamaGrammar

            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception:  # a tool's schema the converter cannot read: calls checked after
                generic = json.dumps(decision_schema(min_calls))
                grammar = LlamaGrammar.from_json_schema(generic, verbose=False)
            if local:  # the grammar for this completion only, under the model's own lock
                return _counted(llm.complete(prompt, grammar=grammar), result)
            assert isinstance(generate, dict)  # another LlamaCPP: its generation options
            with _grammar_lock:
                generate["grammar"] = grammar
                try:
                    return _counted(llm.complete(prompt), result)
                finally:
                    generate.pop("grammar", None)
        return _counted(llm.complete(prompt), result)

    def route(
        self,
        question: str,
        tools: Sequence[BaseTool],
        plan: tuple[list[tuple[str, Example]], str] | None = None,
    ) -> RouteResult:
        """Decide, validate, and repair once when the decision has errors; optional arguments
        still not grounded in the question after that are left out. ``plan``: what
        :meth:`plan` returned for the same question and tools, when the caller has it. With no
        tools offered (no tool fits) the decision is ``answer_directly``, with the model's
        answer to the question as its message. A question is read up to ``MAX_QUERY_CHARS``
        characters (:mod:`toolrag.text`)."""
        question = bounded(question)
        started = time.perf_counter()
        by_name = {t.metadata.get_name(): t for t in tools}
        chosen, prompt = plan or self.plan(question, tools)
        result = RouteResult(
            question=question,
            examples=[i for i, _ in chosen],
            example_questions=[e.query for _, e in chosen],
            tools_offered=list(by_name),
        )
        if not by_name:
            reply = _counted(self.llm.complete(prompt), result)
            result.raw.append(reply)
            result.prompt = prompt
            result.decision = RouteDecision(action="answer_directly", message=reply.strip())
            result.valid = True
            result.seconds = round(time.perf_counter() - started, 3)
            return result
        examples = [e for _, e in chosen]
        named = self.named_ids(question)

        def checked(
            reply: str,
        ) -> tuple[RouteDecision | None, list[str], list[Ungrounded], list[str]]:
            """The reply's decision, its errors, its ungrounded arguments, and the notes of
            the ids put back in it."""
            decision, errors = check_decision(extract_json(reply), by_name)
            found: list[Ungrounded] = []
            notes: list[str] = []
            if decision is not None:
                notes = ground_codes(question, decision, named)
                notes += drop_copied_filters(
                    question, decision, result.example_questions, by_name, self.vocabulary
                )
                found = ungrounded_values(
                    question, decision, examples, by_name, seen=" ".join(named)
                )
            return decision, errors + [u.error for u in found], found, notes

        parts = len(question_parts(question))
        reply = self._ask(prompt, result, min_calls=parts, tools=tools)
        result.raw.append(reply)
        result.prompt = prompt
        decision, errors, found, notes = checked(reply)
        for _ in range(self.max_repairs):
            if not errors:
                break
            result.repaired = True
            repair = REPAIR.format(
                prompt=prompt,
                reply=reply.strip(),
                errors="\n".join(f"- {e}" for e in errors),
                question=question,
            )
            reply = self._ask(repair, result, min_calls=parts, tools=tools)
            result.raw.append(reply)
            result.prompt = repair
            decision, errors, found, notes = checked(reply)
        result.grounded = notes  # the notes of the reply kept, not of one replaced
        if errors and decision is not None and len(found) == len(errors):
            dropped = drop_optional(decision, found, by_name)  # ungrounded optional arguments
            if dropped is not None:
                result.grounded += dropped
                errors = []
        if errors and decision is not None and parts > 1:
            # the grammar made the model write a call per part: a call still wrong after the
            # repair is left out when another is right, rather than losing them all
            errors = keep_valid_calls(decision, errors, found, result.grounded)
        if decision is not None:
            result.grounded += drop_repeated_calls(decision)
        result.decision, result.errors, result.valid = decision, errors, not errors
        result.seconds = round(time.perf_counter() - started, 3)
        return result

    async def arun(
        self, question: str, tools: Sequence[BaseTool], guard: ToolGuard, run_id: str = "router"
    ) -> RouteResult:
        """Route, then run a valid decision's calls through the guard, in parallel."""
        question = bounded(question)
        result = await asyncio.to_thread(self.route, question, tools)
        if result.valid and result.decision is not None and result.decision.calls:
            calls = result.decision.calls

            async def one(n: int, c: ToolCallSpec) -> Narrowed:
                card = guard.card(c.tool)
                unread = unread_values(c.arguments, question, "") if card and card.companion else []
                if unread:  # arithmetic planned over numbers nothing has read yet
                    refusal = unread_refusal(c.tool, unread)
                    return Narrowed(guard.refuse(c.tool, c.arguments, refusal, run_id=run_id), {})
                return await call_with_named_filters(  # with the filters the question names
                    guard, c.tool, c.arguments, question=question, run_id=run_id, step=n
                )

            narrowed = await asyncio.gather(*(one(n, c) for n, c in enumerate(calls)))
            results = []
            for c, done in zip(calls, narrowed, strict=True):
                if done.arguments and done.arguments != c.arguments:
                    done.result.ran_with = done.arguments
                results.append(done.result)
            wider = await asyncio.gather(  # dates the question never gave, on empty results
                *(
                    without_invented_dates(
                        guard,
                        c.tool,
                        r.ran_with or c.arguments,
                        r,
                        question=question,
                        run_id=run_id,
                        step=m,
                    )
                    for m, (c, r) in enumerate(zip(calls, results, strict=True), len(calls))
                )
            )
            result.results = [w or r for r, w in zip(results, wider, strict=True)]
        return result


__all__ = ["Router", "check_decision", "extract_json", "question_parts"]
