"""Whether an answer says that nothing was found.

Asked to answer from a call it repeated, a small model read "You called search_drawings twice
with the same arguments and got the same result" as "it found nothing", and answered "There are
no drawings of that building revised in 2025" over a result that listed three.
:func:`says_nothing_found` spots such an answer, so the run reads the answer from the data
instead of keeping a denial the data contradicts. English phrasings; a bounded prefix of the
answer is read, with linear patterns.
"""

from __future__ import annotations

import re

#: the part of an answer read for a denial (the claim comes first in a short answer)
MAX_CHARS = 600

_DENIAL = re.compile(
    r"\bthere (?:are|is|were|was) no\b"
    r"|\bno [a-z-]+(?: [a-z-]+){0,3} (?:were|was|are|is|could be|can be) "
    r"(?:found|returned|listed)\b"
    r"|\b(?:did|does|do|could|can)(?: not|n't) (?:find|return|show|contain|list|have) any\b"
    r"|\b(?:nothing|none) (?:was |were )?(?:found|returned|matched)\b"
    r"|\bfound (?:nothing|no)\b"
    r"|\bno (?:results|records|matches|matching|data)\b",
    re.IGNORECASE,
)


def says_nothing_found(answer: str) -> bool:
    """Whether ``answer`` claims that nothing matched ("There are no ... drawings", "No
    records were found", "The search did not return any ...")."""
    return _DENIAL.search(" ".join(answer[:MAX_CHARS].split())) is not None


__all__ = ["says_nothing_found"]
