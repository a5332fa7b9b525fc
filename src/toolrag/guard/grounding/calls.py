"""Arguments the question never gave, caught before an agent's call runs.

A small model copies a value from a tool's description ("Customer code (CUST-101) or name
(Bluebird Coffee Roasters)") into a call about another customer ("Which orders of Copperfield
Books were returned?"), and the call returns that other customer's records, which the model
then reports. The router checks its decisions for this
(:mod:`toolrag.guard.grounding.values`); this module gives the ReAct and function agents the same
check, call by call: each identifier, and each proper name a tool's description showed, in the
arguments must be in the question or in what the run has read since (earlier tool results, a
chat's earlier turns).

- A code of the same shape as the one id the question holds (``TKT-103-022`` copied from an
  example, for a question about ``TKT-101-015``) is put right, as the router does.
- A code for a parameter whose description shows a proper name among its values ("code
  (CUST-101) or name (Bluebird Coffee Roasters)") becomes the one proper name the question
  gives. Told to write the name, the small local model did not: it answered "no returned
  orders" instead.
- An optional filter the model invented for a question that holds no id and no proper name
  ("How many tickets were opened in November 2025?", called with ``customer="CUST-103"``) is
  left out at once: there is nothing to write instead, and told so, the small local model
  answered "no tickets" rather than calling again.
- Any other such call does not run the first time: the model gets an ``INVALID_ARGUMENT``
  error naming the value and what the question gives. Made again, the call runs without the
  ungrounded arguments the tool does not require (a customer filter the question never gave),
  or, for a required one, as given.

The result of a call that runs says what was changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from llama_index.core.tools import BaseTool

from toolrag.guard.grounding.decision import RouteDecision, ToolCallSpec
from toolrag.guard.grounding.names import NAME_SPAN, code_like, given_values
from toolrag.guard.grounding.values import Ungrounded, ground_codes, name_like, ungrounded_values
from toolrag.guard.idempotency import args_hash
from toolrag.tools.prompting import tool_schema
from toolrag.tools.result import ErrorCode, ToolResult

UNSEEN = "is in neither the question nor a tool result read since"


class Grounded(NamedTuple):
    """What to do with one call: give the model ``refusal`` (the call does not run), or run it
    with ``arguments`` and add ``note`` to its result."""

    refusal: ToolResult | None
    arguments: dict[str, Any]
    note: str | None = None


def _instead(value: str, given: list[str]) -> str | None:
    """The value of the question to write for ``value``: a name the question gives for a
    code (the tool takes names where its description says so), else its first value."""
    names = [g for g in given if not code_like(g)]
    if code_like(value) and names:
        return names[0]
    return given[0] if given else None


def _shows_a_name(schema: dict[str, Any] | None, key: str) -> bool:
    """Whether parameter ``key``'s description shows a proper name as a value it takes
    ("Customer code (CUST-101) or name (Bluebird Coffee Roasters)")."""
    prop = ((schema or {}).get("properties") or {}).get(key) or {}
    text = str(prop.get("description") or "")
    return any(name_like(m[0]) for m in NAME_SPAN.finditer(text))


def _named_instead(
    question: str, schema: dict[str, Any] | None, found: list[Ungrounded], args: dict[str, Any]
) -> list[str]:
    """Put the question's one proper name in place of each ungrounded code whose parameter
    shows names among its values (``customer: 'CUST-107'`` for a question about Bluebird
    Coffee Roasters, when the parameter says "code (CUST-101) or name (...)"): the model wrote a
    code it could only have copied where the name it was given would do. Changes ``args``;
    returns a note per value replaced."""
    names = [g for g in given_values(question) if name_like(g)]
    if len(names) != 1:
        return []
    notes = []
    for u in found:
        if args.get(u.key) == u.value and code_like(u.value) and _shows_a_name(schema, u.key):
            args[u.key] = names[0]
            notes.append(f"{u.key}={names[0]!r} for {u.value!r}")
    return notes


def ground_call(
    tool: BaseTool,
    arguments: Mapping[str, Any],
    *,
    question: str,
    seen: str,
    refused: set[str],
    shown: Mapping[str, BaseTool] | None = None,
) -> Grounded:
    """Check one call of ``tool`` against ``question`` and ``seen`` (what the run has read
    since). ``refused``: the calls refused so far in this run (updated here), so a call is
    refused once and runs when the model repeats it. ``shown``: the other tools the model may
    have been shown, whose descriptions can pair a code with a name the question uses."""
    args = dict(arguments)
    if not question:
        return Grounded(None, args)
    name = tool.metadata.get_name()
    schema = tool_schema(tool)

    def one_call(arguments: dict[str, Any]) -> RouteDecision:
        return RouteDecision(
            action="call_tools", calls=[ToolCallSpec(tool=name, arguments=arguments)]
        )

    def ungrounded() -> list[Ungrounded]:
        # the guard derives an idempotency key when the model gives none; one it gives is its own
        checked = one_call({k: v for k, v in args.items() if k != "idempotency_key"})
        return ungrounded_values(
            question, checked, [], {**(shown or {}), name: tool}, seen=seen, unsupported=UNSEEN
        )

    found = ungrounded()
    if not found:
        return Grounded(None, args)
    notes = []
    only = one_call({u.key: args[u.key] for u in found})
    if replaced := ground_codes(question, only):  # the question's one id of the same shape
        args.update(only.calls[0].arguments)
        fixed = "; ".join(n.removeprefix(f"{name}.") for n in replaced)
        notes.append(f"Put the question's id in place of another: {fixed}.")
        found = ungrounded()
    if renamed := _named_instead(question, schema, found, args):
        notes.append(
            f"Wrote {'; '.join(renamed)}: the name the question gives, which the parameter takes."
        )
        found = ungrounded()
    note = " ".join(notes) or None
    if not found:
        return Grounded(None, args, note)
    key = f"{name}:{args_hash(args)}"
    keys = list(dict.fromkeys(u.key for u in found))
    required = set((schema or {}).get("required") or [])
    given = given_values(question)
    # an optional filter the model invented when the question holds no id or proper name that
    # could fill it: refusing only invites the small model to give up, so it is left out now
    fillable = any(code_like(g) or name_like(g) for g in given) or required.intersection(keys)
    if key not in refused and fillable:
        refused.add(key)
        says = ", ".join(repr(g) for g in given[:6]) if given else "no such value"
        fixes = []
        for u in found:
            value = _instead(u.value, given)
            fix = f"{u.key}={value!r}" if value else f"{u.key} as the question gives it"
            fixes.append(fix if u.key in required else f"{fix} (or leave {u.key} out)")
        return Grounded(
            ToolResult.fail(
                ErrorCode.INVALID_ARGUMENT,
                "; ".join(f"{u.key}: {u.value!r} {UNSEEN}" for u in found)
                + f". The question gives {says}.",
                suggestion=f"Call {name} again with {', '.join(fixes)}.",
            ),
            args,
        )
    if required.intersection(keys):
        given_args = ", ".join(f"{k}={args[k]!r}" for k in keys)
        return Grounded(
            None,
            args,
            f"{given_args}: in neither the question nor an earlier result; {name} ran with it "
            "as given, so check that these results are the ones the question asks about.",
        )
    left_out = ", ".join(f"{k}={args.pop(k)!r}" for k in keys if k in args)
    return Grounded(
        None,
        args,
        f"Left out {left_out}, which neither the question nor an earlier result gives: these "
        f"are the results of {name} without it.",
    )
