"""Whether a request asks for an action, read without a model.

A question that asks for information ("Which invoices of CUST-104 are unpaid?") must never reach
a write, delete or external tool: a small model offered ``submit_expense_report`` beside the
reads calls it. :func:`asks_for_action` says whether a request asks for what an action tool
does: its verb (the first word of the tool's name, ``submit`` of ``submit_expense_report``, or of
its description), or a verb of the same kind (create, change, delete or send), appears

- in its plain form where a request starts ("Cancel ORD-1042", "..., and then submit it",
  "please close", "can you create ..."), or
- in any form in a request that does not open as a question ("I need ORD-1042 cancelled").

"Was the order cancelled?" and "What expense reports were submitted?" ask for information.
English only; a question in another language is read in the English the tool index's
translator makes of it. A request is read up to ``MAX_CHARS`` characters, its whitespace runs
squashed, by patterns without overlapping repetitions: linear time.
"""

from __future__ import annotations

import re

from toolrag.cards.card import ToolCard
from toolrag.text import squashed

ACTIONS = frozenset({"write", "delete", "external"})
MAX_CHARS = 2_000

# Verbs by kind of action. Words that open information questions as often as requests ("open
# tickets", "share of the budget", "set of rules", "request for a quote") are left out.
_KINDS = (
    "create add draft write register insert enter upload",
    "update change edit modify close reopen rename move assign reassign reschedule approve "
    "reject resolve",
    "delete remove cancel drop void withdraw revoke archive purge erase",
    "send submit email mail notify publish forward message book pay transfer invite escalate",
)
_GROUP = {verb: set(kind.split()) for kind in _KINDS for verb in kind.split()}
_OPENERS = "what which who whom whose when where why how is are was were did does do has have had"
_QUESTION_OPENERS = frozenset(re.findall(r"[a-z]+", _OPENERS + " am any"))
_WORD = re.compile(r"[a-z]+")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":  # submitt, cancell
        word = word[:-1]
    return word.removesuffix("e") if len(word) > 3 else word


def action_verbs(card: ToolCard) -> set[str]:
    """The verbs that ask for what ``card`` does: the verb of its name (or description) and
    the verbs of the same kind."""
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", card.name).lower())
    first = words[0] if words else ""
    if first not in _GROUP:
        described = _WORD.findall(card.description.lower()[:200])
        first = described[0] if described else first
    return {first, *_GROUP.get(first, set())} - {""}


def asks_for_action(request: str, card: ToolCard) -> bool:
    """Whether ``request`` asks for what the action ``card`` does (see the module docstring).
    Always True for a read card."""
    if card.side_effect not in ACTIONS:
        return True
    verbs = action_verbs(card)
    text = squashed(request[:MAX_CHARS]).lower()  # one space between words: linear matching
    bare = "|".join(sorted(verbs))
    clause = re.compile(
        rf"(?:^|[,;:.!?]\s*+|\b(?:and|then|also|please|now)\s++|\b(?:can|could|would|will)\s++"
        rf"you\s++(?:please\s++)?|\bi\s++(?:want|need|would like)\s++(?:you\s++)?to\s++)"
        rf"(?:please\s++)?(?:{bare})\b"
    )
    if clause.search(text):
        return True
    words = _WORD.findall(text)
    if not words or words[0] in _QUESTION_OPENERS:
        return False
    stems = {_stem(v) for v in verbs}
    return any(_stem(w) in stems for w in words)


# Words that ask for arithmetic over figures or dates: a companion (compute) tool is offered only
# to a request that has one. "What is the cancellation fee?" has none, and offered
# calculate_share beside the documents, the local model went to run_sql instead.
_ARITHMETIC = re.compile(
    r"\b(?:how many (?:days|weeks|months|years|working days|calendar days)|how long|difference|"
    r"differ|how much (?:more|less)|more than|less than|fewer than|greater|higher|lower|larger|"
    r"smaller|exceed\w*|"
    r"percent\w*|share|proportion|ratio|fraction|total\w*|sum|add(?:ed)? up|combined|altogether|"
    r"average|mean|late|early|ahead|behind|overdue|elapsed|compare\w*|versus|vs\.?|"
    r"after|before|until|since|plus|minus)\b|%"
)


def asks_for_arithmetic(request: str) -> bool:
    """Whether ``request`` asks for arithmetic: a total, a difference, a share, a count of days
    between dates, a comparison of two figures (English words only)."""
    return bool(_ARITHMETIC.search(request[:MAX_CHARS].lower()))
