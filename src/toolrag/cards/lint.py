"""``toolrag tools lint``: check tool cards against the tool-card contract (docs/contracts.md).

Each finding names the tool, the rule, what is wrong and how to fix it. Rules:

- ``name``: ``verb_noun`` in snake case, starting with a verb.
- ``verb-prefix``: one verb per meaning across the pool (``get_`` or ``fetch_``, not both).
- ``description``: 3-5 sentences that say what the tool does, when to use it, what it returns
  and what it does not do.
- ``parameter``: every parameter has a description.
- ``enum-description``: a parameter's description does not list only some of its allowed
  values (a model takes the list for all of them).
- ``examples``: 5-40 example queries (they are part of what retrieval matches).
- ``duplicate``: two descriptions with embedding cosine >= 0.95 (retrieval cannot tell them
  apart).
- ``deprecated``: ``deprecated_by`` names a tool of the pool.

Rules are about wording a model reads, so they are heuristics: an ``error`` breaks the
contract, a ``warning`` weakens retrieval.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import BaseModel

from toolrag.cards.card import ToolCard

Severity = Literal["error", "warning"]

DUPLICATE_COSINE = 0.95
MIN_EXAMPLES, MAX_EXAMPLES = 5, 40

# Verbs a tool name may start with, grouped by meaning: a pool should use one verb per group.
VERB_GROUPS: tuple[tuple[str, ...], ...] = (
    ("get", "fetch", "retrieve", "read", "obtain"),
    ("search", "find", "query", "lookup"),
    ("list", "enumerate", "browse"),
    ("create", "add", "new", "make", "insert", "register", "post"),
    ("update", "modify", "edit", "change", "set", "patch", "put"),
    ("delete", "remove", "drop", "destroy", "erase"),
    ("send", "email", "notify", "publish"),
    ("calculate", "compute", "calc", "estimate"),
    ("convert", "transform", "translate"),
)
OTHER_VERBS = {
    "run", "execute", "check", "validate", "count", "describe", "summarize", "compare", "plot",
    "generate", "upload", "download", "export", "import", "schedule", "book", "cancel",
    "approve", "reject", "start", "stop", "open", "close", "analyze", "predict", "detect",
    "extract", "parse", "format", "sort", "filter", "merge", "split", "play", "record",
    "resolve", "submit", "track", "verify", "ask", "answer", "fill", "draw", "render", "sync",
}  # fmt: skip
KNOWN_VERBS = {v for group in VERB_GROUPS for v in group} | OTHER_VERBS

# Phrases that show each part of a description (what is the first sentence itself).
_WHEN = re.compile(
    r"\b(use (it|this|when|for|to|only)|when (you|the user|a question)|for questions)\b", re.I
)
_RETURNS = re.compile(r"\b(returns?|gives back|responds with|outputs?)\b", re.I)
_NOT = re.compile(r"\b(does not|do not|doesn't|don't|not for|never|cannot|can't|only)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")


class LintFinding(BaseModel):
    """One problem of one card, with the fix."""

    tool: str
    rule: str
    severity: Severity
    message: str
    fix: str


def _verb(name: str) -> str:
    return re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name, maxsplit=1)[0].lower()


def sentences(text: str) -> list[str]:
    """The description's sentences (a signature line ``name(args) -> T`` is not one)."""
    body = " ".join(text.split())
    body = re.sub(r"^[\w.]+\(.*?\)\s*(->\s*\S+\s*)?", "", body)  # FunctionTool signature
    return [s for s in _SENTENCE.split(body) if len(s.split()) >= 2]


def _lint_name(card: ToolCard) -> list[LintFinding]:
    name = card.name
    out = []
    if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", name):
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
        snake = re.sub(r"[\W_]+", "_", snake).strip("_").lower()
        out.append(
            LintFinding(
                tool=name,
                rule="name",
                severity="error",
                message=f"{name!r} is not verb_noun snake case.",
                fix=f"Rename it to a lower-case verb_noun name such as {snake or 'get_thing'!r}.",
            )
        )
    elif _verb(name) not in KNOWN_VERBS:
        out.append(
            LintFinding(
                tool=name,
                rule="name",
                severity="warning",
                message=f"{name!r} does not start with a common verb ({_verb(name)!r}).",
                fix="Start the name with what it does: get_, list_, search_, create_, update_…",
            )
        )
    return out


def _lint_verbs(cards: Sequence[ToolCard]) -> list[LintFinding]:
    by_verb: dict[str, list[str]] = defaultdict(list)
    for card in cards:
        by_verb[_verb(card.name)].append(card.name)
    out = []
    for group in VERB_GROUPS:
        used = sorted((v for v in set(group) if by_verb.get(v)), key=lambda v: -len(by_verb[v]))
        if len(used) < 2:
            continue
        main = used[0]
        for verb in used[1:]:
            for name in by_verb[verb]:
                out.append(
                    LintFinding(
                        tool=name,
                        rule="verb-prefix",
                        severity="warning",
                        message=(
                            f"{verb}_ and {main}_ mean the same here; the pool uses {main}_ "
                            f"for {len(by_verb[main])} tool(s)."
                        ),
                        fix=f"Rename it {main}_{name[len(verb) :].lstrip('_')}.",
                    )
                )
    return out


def _lint_description(card: ToolCard) -> list[LintFinding]:
    text = card.description or ""
    parts = sentences(text)
    out = []

    def finding(message: str, fix: str, severity: Severity = "error") -> None:
        out.append(LintFinding(tool=card.name, rule="description", severity=severity,
                               message=message, fix=fix))  # fmt: skip

    if not parts:
        finding(
            "The description is empty.",
            "Write 3-5 sentences: what it does, when to use it, what it returns, what it "
            "does not do.",
        )
        return out
    if not (3 <= len(parts) <= 5):
        finding(
            f"The description has {len(parts)} sentence(s); the contract asks for 3-5.",
            "Say what, when, returns and not, one sentence each (plus one for limits).",
            severity="warning",
        )
    body = " ".join(parts[1:]) if len(parts) > 1 else ""
    if not _WHEN.search(text):
        finding("It does not say when to use the tool.", "Add 'Use it for/when …'.")
    if not _RETURNS.search(body or text):
        finding("It does not say what the tool returns.", "Add 'Returns …'.")
    if not _NOT.search(body or text):
        finding(
            "It does not say what the tool does not do.",
            "Add 'It does not …' naming the neighbour tool to use instead.",
        )
    return out


def _lint_parameters(card: ToolCard) -> list[LintFinding]:
    return [
        LintFinding(
            tool=card.name,
            rule="parameter",
            severity="error",
            message=f"Parameter {name!r} has no description.",
            fix=f"Describe {name!r}: its meaning, format and an example value.",
        )
        for name, description in card.parameter_items()
        if not description.strip()
    ]


def _allowed(spec: Any) -> list[str]:
    """The values a parameter's schema allows (its ``enum``, or one of its ``anyOf``'s)."""
    if not isinstance(spec, dict):
        return []
    for option in [spec, *(o for o in spec.get("anyOf") or [] if isinstance(o, dict))]:
        if isinstance(option.get("enum"), list):
            return [str(v) for v in option["enum"] if v is not None]
    return []


def _lint_enum_descriptions(card: ToolCard) -> list[LintFinding]:
    """A description that lists some of its parameter's allowed values as if they were all:
    "passed, failed or partial" for an enum that also allows "scheduled" leads a model to
    filter a question about what has not happened yet by "failed"."""
    findings = []
    props = card.parameters.get("properties") or {}
    for name, spec in props.items() if isinstance(props, dict) else []:
        allowed = _allowed(spec)
        description = str((spec or {}).get("description", "")) if isinstance(spec, dict) else ""
        words = set(re.findall(r"[\w-]+", description.lower()))
        named = [v for v in allowed if v.lower() in words]
        missing = [v for v in allowed if v.lower() not in words]
        if len(named) >= 2 and missing:
            findings.append(
                LintFinding(
                    tool=card.name,
                    rule="enum-description",
                    severity="warning",
                    message=f"Parameter {name!r} lists {', '.join(named)} in its description "
                    f"but also allows {', '.join(missing)}.",
                    fix=f"Name every allowed value of {name!r} in its description, with what "
                    "each means, or none of them.",
                )
            )
    return findings


def _lint_examples(card: ToolCard) -> list[LintFinding]:
    n = len(card.examples)
    if MIN_EXAMPLES <= n <= MAX_EXAMPLES:
        return []
    return [
        LintFinding(
            tool=card.name,
            rule="examples",
            severity="warning",
            message=f"{n} example queries; the contract asks for {MIN_EXAMPLES}-{MAX_EXAMPLES}.",
            fix=(
                "Add example user requests to the card (examples: [...] in its YAML)."
                if n < MIN_EXAMPLES
                else "Keep the most varied examples."
            ),
        )
    ]


def _lint_deprecated(cards: Sequence[ToolCard]) -> list[LintFinding]:
    names = {c.name for c in cards}
    return [
        LintFinding(
            tool=c.name,
            rule="deprecated",
            severity="error",
            message=f"deprecated_by names {c.deprecated_by!r}, which is not in the pool.",
            fix="Point deprecated_by at the successor's name, or add the successor.",
        )
        for c in cards
        if c.deprecated_by and c.deprecated_by not in names
    ]


def _lint_duplicates(cards: Sequence[ToolCard], embed: BaseEmbedding) -> list[LintFinding]:
    live = [c for c in cards if not c.deprecated_by and c.description.strip()]
    if len(live) < 2:
        return []
    vectors = np.asarray(
        embed.get_text_embedding_batch([" ".join(sentences(c.description)) for c in live]),
        dtype=np.float32,
    )
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors @ vectors.T
    out = []
    for i, j in zip(*np.triu_indices(len(live), k=1), strict=True):
        if sims[i, j] >= DUPLICATE_COSINE:
            a, b = live[int(i)].name, live[int(j)].name
            out.append(
                LintFinding(
                    tool=b,
                    rule="duplicate",
                    severity="warning",
                    message=f"Its description matches {a!r} (cosine {sims[i, j]:.3f}).",
                    fix=f"Merge it into {a!r}, deprecate one (deprecated_by), or say how they "
                    "differ in both descriptions.",
                )
            )
    return out


def lint_cards(cards: Sequence[ToolCard], embed: BaseEmbedding | None = None) -> list[LintFinding]:
    """Every finding for ``cards``, errors first, then by tool. ``embed`` enables the
    near-duplicate check."""
    findings: list[LintFinding] = []
    for card in cards:
        findings += _lint_name(card)
        if card.deprecated_by:
            continue  # a deprecated card is out of retrieval: only its name and successor matter
        findings += _lint_description(card) + _lint_parameters(card) + _lint_examples(card)
        findings += _lint_enum_descriptions(card)
    findings += _lint_verbs([c for c in cards if not c.deprecated_by])
    findings += _lint_deprecated(cards)
    if embed is not None:
        findings += _lint_duplicates(cards, embed)
    return sorted(findings, key=lambda f: (f.severity != "error", f.tool, f.rule))
