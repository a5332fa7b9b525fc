"""Whether a decision's argument values come from the question.

A small model fills in values it cannot know: a customer's code for the customer's name, an
example's ticket number, the code or the name a parameter's description gives as its example
(``"customer": "CUST-107"`` or ``"Copperfield Books"`` for a question about Bluebird Coffee
Roasters). The call then runs, and fetches another record's data. For any
tool pool:

- :func:`ground_codes` puts back an id the model mangled (a whole value, or one inside a SQL
  statement or a phrase) when the question holds exactly one id of the same shape
  (``TKT-103-022`` copied from an example, for a question about ``TKT-101-015``): no model
  call is needed.
- :func:`ungrounded_values` names every other identifier or proper name that neither the
  question nor a shown example's mapping supports; the router sends those to its repair round.
- :func:`drop_optional` leaves out the optional arguments still ungrounded after that round.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from llama_index.core.tools import BaseTool

from toolrag.guard.grounding.decision import RouteDecision, ToolCallSpec
from toolrag.guard.grounding.names import NAME_SPAN, TOKEN, code_like, folded, given_values
from toolrag.tools.prompting import tool_schema


class Example(Protocol):
    """A shown example (the router's :class:`~toolrag.routing.examples.Example`): its question,
    its calls, and its whole record as JSON."""

    @property
    def query(self) -> str: ...
    @property
    def calls(self) -> Sequence[ToolCallSpec]: ...
    def model_dump_json(self) -> str: ...


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def embedded_codes(text: str) -> list[str]:
    """The ids inside a longer value, such as a SQL statement or a search phrase
    (``CUST-109`` in ``... WHERE customer_code = 'CUST-109'``); none for a value of one token."""
    if not any(ch.isspace() for ch in text):
        return []
    return [t for t in TOKEN.findall(text) if code_like(t)]


def strings(value: Any) -> list[str]:
    """Every string and number inside an argument value (lists and objects walked)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [str(value).strip()]
    return []


def _stem(word: str) -> str:
    """A word casefolded, a plural ``s`` dropped (``Dollars`` and ``dollar`` compare equal)."""
    w = word.casefold()
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _capitalised(text: str, skip_first: bool) -> set[str]:
    words = _WORD.findall(text)[1 if skip_first else 0 :]
    return {_stem(w) for w in words if len(w) >= 3 and w[0].isupper()}


def name_like(text: str) -> bool:
    """A proper name: two or more words, every word of 4+ letters capitalised
    (``Copperfield Books``, ``Elm Street Pharmacy 7``), not a phrase or a sentence."""
    words = _WORD.findall(text)
    long = [w for w in words if len(w) >= 4 and not w.isdigit()]
    return len(_capitalised(text, False)) >= 2 and all(w[0].isupper() for w in long)


def _shape(text: str) -> str:
    return re.sub(r"[A-Za-z]", "A", re.sub(r"\d", "9", text))


def _schema_nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON schema, the schema itself and its parameters' included."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _schema_nodes(v)
    elif isinstance(node, list):
        for v in node:
            yield from _schema_nodes(v)


def _schema_values(schema: dict[str, Any] | None) -> set[str]:
    """Every value a tool's schema lists as allowed (``enum``) or gives as a ``default``: the
    model may pick those."""
    found: set[str] = set()
    for node in _schema_nodes(schema):
        found.update(folded(str(v)) for v in node.get("enum") or [])
        if isinstance(node.get("default"), (str, int, float)):
            found.add(folded(str(node["default"])))
    return found


def _descriptions(schema: dict[str, Any] | None) -> list[str]:
    """Every ``description`` in a JSON schema (the parameters' own)."""
    return [
        n["description"] for n in _schema_nodes(schema) if isinstance(n.get("description"), str)
    ]


def ground_codes(question: str, decision: RouteDecision, named: Sequence[str] = ()) -> list[str]:
    """Put the question's id in place of a code-like argument the question does not contain
    when the question holds exactly one id of that shape (letters and digits in the same
    places): the model copied a neighbour's id (an example's) instead of this one. ``named``:
    ids the question gives by a name (a known value's alias: "Bluebird Coffee Roasters" for
    ``CUST-101``), counted as the question's. Changes ``decision`` in place; returns a note per
    value replaced."""
    asked = folded(" ".join([question, *named]))
    ids = {t for t in TOKEN.findall(question) if code_like(t)} | {n for n in named if code_like(n)}
    notes = []
    for call in decision.calls:
        for key, value in call.arguments.items():
            if not isinstance(value, str):
                continue
            for code in [value] if code_like(value) else embedded_codes(value):
                if folded(code) in asked:
                    continue
                same = {t for t in ids if _shape(t.upper()) == _shape(code.upper())}
                if len(same) == 1:
                    (given,) = same
                    pattern = rf"(?<![A-Za-z0-9]){re.escape(code)}(?![A-Za-z0-9])"
                    call.arguments[key] = re.sub(pattern, given, call.arguments[key])
                    notes.append(f"{call.tool}.{key}: {code!r} -> {given!r}")
    return notes


_CLAUSE = re.compile(r"(?<=[.;,!?])\s+|\n\s*\n")


def _clauses(text: str) -> list[str]:
    """A text cut at its sentence and clause marks (``.;,!?`` before a space) and blank
    lines (a docstring's wrapped lines stay one clause)."""
    return [c for c in _CLAUSE.split(text) if c.strip()]


def _paired(fold: str, clauses: Sequence[str], names: set[str]) -> bool:
    """Whether a clause of a shown text pairs the code ``fold`` with a proper name this
    question uses: "Customer code (CUST-101) or name (Bluebird Coffee Roasters)" pairs
    ``CUST-101`` with a question about "Bluebird Coffee"; ``names``: the question's
    capitalised words, stemmed."""
    for clause in clauses:
        if fold not in folded(clause):
            continue
        for m in NAME_SPAN.finditer(clause):
            if name_like(m[0]) and _capitalised(m[0], False) & names:
                return True
    return False


class Ungrounded(NamedTuple):
    """One argument whose value the question does not give, and the error for the model."""

    call: int
    key: str
    error: str
    value: str = ""  # the value not given


def ungrounded_values(
    question: str,
    decision: RouteDecision,
    examples: Sequence[Example],
    tools: Mapping[str, BaseTool] | None = None,
    *,
    seen: str = "",
    unsupported: str = "is not in the question, and no example maps it from a name it uses",
) -> list[Ungrounded]:
    """The identifiers and proper names in the arguments that the question does not give.

    A code-like value (:func:`code_like`), or one inside a longer value such as a SQL
    statement (:func:`embedded_codes`), is grounded when the question contains it. A proper
    name (:func:`name_like`) is checked only when the prompt showed it, in an example or in an
    offered tool's description or schema (the names a small model copies), and is grounded
    when the question uses one of its words: a name the model knows ("Los Angeles" for "LA")
    is its own. Either is also grounded when a shown example maps it from a name this question
    also uses (the example's question says "Bluebird Coffee Roasters", its call says
    ``CUST-101``, and this question says "Bluebird"), and when the tool's schema lists it (an
    ``enum`` or a ``default``). A code is also grounded when a clause of an offered tool's
    description or parameter descriptions pairs it with a name the question uses ("Customer
    code (CUST-101) or name (Bluebird Coffee Roasters)"). Any other is an error for the
    repair round, which asks for the value as the question states it (the name, where the tool
    accepts one) or no value for an optional argument.

    ``seen``: what the model has read since the question (earlier tool results, a chat's
    earlier answers); a value found there is grounded too (a code looked up first).
    ``unsupported``: how an error says where the value is missing from."""
    asked = folded(f"{question}\n{seen}")
    offered = {name: (t.metadata.description, tool_schema(t)) for name, t in (tools or {}).items()}
    shown = folded(
        " ".join(e.query + " " + e.model_dump_json() for e in examples)
        + " ".join(text + json.dumps(schema or {}) for text, schema in offered.values())
    )
    clauses = [
        c
        for text, schema in offered.values()
        for c in _clauses("\n\n".join([text, *_descriptions(schema)]))
    ]
    words = {_stem(w) for w in _WORD.findall(f"{question}\n{seen}")}
    names = _capitalised(question, True)
    given = given_values(question)
    hint = (
        "this question gives " + ", ".join(repr(v) for v in given[:6])
        if given
        else "this question gives no such value"
    )
    errors = []
    for n, call in enumerate(decision.calls):
        allowed = _schema_values(offered.get(call.tool, ("", None))[1])
        for key, value in call.arguments.items():
            for text in [t for s in strings(value) for t in (s, *embedded_codes(s))]:
                fold = folded(text)
                if fold in allowed:
                    continue
                if code_like(text):
                    if fold in asked or _paired(fold, clauses, names):
                        continue
                elif not name_like(text) or fold not in shown or _capitalised(text, False) & words:
                    continue
                mapped = any(
                    fold not in folded(e.query)
                    and _capitalised(e.query, True) & words
                    and fold in (folded(s) for c in e.calls for s in strings(c.arguments))
                    for e in examples
                )
                if mapped:
                    continue
                source = next((e for e in examples if fold in folded(e.query)), None)
                where = (
                    f"is copied from the example question {source.query!r}"
                    if source is not None
                    else unsupported
                )
                error = (
                    f"calls[{n}].arguments.{key}: {text!r} {where}; {hint}. Take the value "
                    "from this question (write a name as the question gives it where the tool "
                    "accepts names), or leave out an optional argument the question does not "
                    "give."
                )
                errors.append(Ungrounded(n, key, error, text))
                break
    return errors


def drop_optional(
    decision: RouteDecision,
    found: Sequence[Ungrounded],
    tools: Mapping[str, BaseTool],
) -> list[str] | None:
    """Leave out ungrounded arguments the tools do not require (a customer filter the question
    never gave), after the repair round could not fix them: the call then runs wider instead
    of on another record. None, with ``decision`` untouched, when one of them is required."""
    drops = []
    for u in found:
        n, key = u.call, u.key
        call = decision.calls[n]
        schema = tool_schema(tools[call.tool]) if call.tool in tools else None
        if schema is None or key in (schema.get("required") or []):
            return None
        drops.append((call, key))
    notes = []
    for call, key in drops:
        if key in call.arguments:
            notes.append(f"{call.tool}.{key}: {call.arguments.pop(key)!r} left out")
    return notes


__all__ = [
    "Ungrounded",
    "code_like",
    "drop_optional",
    "folded",
    "given_values",
    "ground_codes",
    "name_like",
    "strings",
    "ungrounded_values",
]
