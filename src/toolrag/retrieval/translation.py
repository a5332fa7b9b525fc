"""Questions in other languages, translated into English for the tool search.

The bundled embedding model (all-MiniLM-L6-v2) and BM25 read English. A question written mostly
outside the English alphabet ("北京后天的天气如何？", "스테이크 만드는 법 알려줘") lands near no
tool: on BFCL, 12 of its 18 such questions had their tool outside the top 30. So does one in
another language of the Latin alphabet ("Tìm chuyến xe cho tôi từ Hà Nội", "Saya melihat bahwa
produk ..."), which the language identifier of ``py3langid`` (langid.py's model, 142 languages,
shipped in the package) recognises. The LLM the agent already runs (Qwen2.5 reads Chinese,
Korean, Thai, Vietnamese ...) translates such a question before the ToolIndex searches; the
agent itself still reads the original. An English question is searched as it is, with no LLM
call, so English pays nothing but the identifier (under a millisecond, after 0.6 s to load it
once per process).

Translations are kept in SQLite, keyed by the model and the question: a question asked again
costs nothing, and a benchmark replays the translations it recorded (with the seconds each took).
A failed LLM call, or a reply that holds no translation, searches the original question: the
search never fails because of the translation.

    translate = QueryTranslator(settings.translations_db, llm)
    index.translator = translate            # ToolIndex.retrieve translates when it should
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llama_index.core.llms import LLM

log = logging.getLogger(__name__)

# A question whose letters are at least this share outside a-z (any case) is translated.
# Accented Latin letters count as outside: French or Spanish text has a few (so the language
# identifier decides, below); Chinese, Korean, Thai, Arabic or Cyrillic text is nearly all outside.
FOREIGN_SHARE = 0.3
# The languages the language identifier chooses among: English and those the bundled LLM
# translates, Qwen2's documented 29 (Qwen2.5 keeps them) less Cebuano, which the identifier
# lacks. Over all of the identifier's 142 languages, short English is often given a neighbour
# of English ("Get weather of Ha Noi for me": Nigerian Pidgin, 0.75) and short text in another
# language gets low odds spread over its neighbours ("Qual a temperatura atual em
# Divinópolis?": Portuguese, 0.43); among these, the same questions are English (0.97) and
# Portuguese (0.85).
LANGUAGES = (
    "en",
    "zh",
    "de",
    "fr",
    "es",
    "pt",
    "it",
    "nl",
    "ru",
    "cs",
    "pl",
    "ar",
    "fa",
    "he",
    "tr",
    "ja",
    "ko",
    "vi",
    "th",
    "id",
    "ms",
    "lo",
    "my",
    "km",
    "tl",
    "hi",
    "bn",
    "ur",
)
# A question in the Latin alphabet is translated when the identifier gives another language
# than English more than half the probability (over ``LANGUAGES``). None of NESTFUL's 1,300
# requests, BFCL's 207 multi-tool ones or the sample domain's 253 questions is; 14 of BFCL's
# single-call questions written in the Latin alphabet are: Portuguese, Vietnamese, Spanish,
# Indonesian, Chinese or Hindi with Latin-letter names in them, and one English, "Get version"
# (Dutch at 0.5003), which the LLM translates as it is (README).
LANGUAGE_CONFIDENCE = 0.5
PROMPT = (
    "Translate this request into English. Keep names, numbers and quoted values as they are. "
    "Write only the translation.\n\nRequest: {text}\n\nEnglish:"
)
# a reply's preamble line ("Here is the translation:") and label ("English: ..."). A preamble
# is a line that ends with ":" and opens with "here" or "sure" or has the word "translation":
# tested apart (:func:`_preamble`), since ``.*\btranslation\b.*:`` backtracks over the line twice.
_PREAMBLE_OPENER = re.compile(r"(?:here|sure)\b", re.IGNORECASE)
_TRANSLATION_WORD = re.compile(r"\btranslation\b", re.IGNORECASE)
_LABEL = re.compile(r"^(?:english|translation|request)\s*+:\s*+", re.IGNORECASE)


def _preamble(line: str) -> bool:
    """Whether a reply's stripped line is a preamble ("Here is the translation:"), in linear
    time."""
    if not line.endswith(":"):
        return False
    return bool(_PREAMBLE_OPENER.match(line) or _TRANSLATION_WORD.search(line))


def foreign_alphabet(text: str) -> bool:
    """Whether ``text`` is written mostly outside the English alphabet (at least
    ``FOREIGN_SHARE`` of its letters): digits, punctuation and spaces do not count."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    foreign = sum(1 for c in letters if not ("a" <= c.lower() <= "z"))
    return foreign / len(letters) >= FOREIGN_SHARE


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([code for code in LANGUAGES if code in identifier.nb_classes])
    return identifier


def language(text: str) -> tuple[str, float]:
    """The language of ``LANGUAGES`` that ``text`` is most likely in (an ISO 639-1 code such as
    ``"vi"``) and its probability among them, by langid.py's model."""
    code, probability = _identifier().classify(text)
    return str(code), float(probability)


def needs_translation(text: str) -> bool:
    """Whether ``text`` should be searched in English translation: written mostly outside the
    English alphabet (:func:`foreign_alphabet`), or with letters of it in a language the
    identifier gives more than ``LANGUAGE_CONFIDENCE`` and that is not English."""
    if foreign_alphabet(text):
        return True
    if not any(c.isalpha() for c in text):
        return False
    code, probability = language(text)
    return code != "en" and probability > LANGUAGE_CONFIDENCE


def parse_translation(reply: str, original: str) -> str | None:
    """The translation in an LLM reply: its first line of text, without a preamble ("Here is
    the translation:"), a label ("English:") or surrounding quotes; None when there is none, or
    when the reply is far longer than a translation of ``original`` could be."""
    for line in reply.strip().splitlines():
        line = line.strip()
        if not line or _preamble(line):
            continue
        line = _LABEL.sub("", line).strip().strip("\"'“”").strip()
        if not line or len(line) > 4 * len(original) + 200:
            return None
        return line
    return None


class QueryTranslator:
    """Translates questions not in English (:func:`needs_translation`) with ``llm``, caching each
    translation in SQLite at ``path`` per model. ``llm`` may be a function that builds it: it is
    called at the first question that needs a translation, so English questions never load a
    model. Without an ``llm`` it only replays the cache (any model's translation), and a
    question it has none for is searched as it is.

    Calling it returns the text to search: the translation, or the question itself when it
    needs none or none could be made."""

    def __init__(self, path: Path, llm: LLM | Callable[[], LLM] | None = None) -> None:
        self.path = path
        self._llm: LLM | None = llm if isinstance(llm, LLM) else None
        self._make_llm = None if isinstance(llm, LLM) else llm
        self.missing = 0  # questions that needed a translation and got none
        # a state folder that cannot be written (a read-only deployment) keeps the
        # translations of this process only
        self._memory: dict[str, str] = {}
        self._stored = True
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._db() as db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS translations (model TEXT, text TEXT, "
                    "translation TEXT, seconds REAL, PRIMARY KEY (model, text))"
                )
        except (OSError, sqlite3.Error) as exc:
            log.warning("translations are not cached in %s: %s", path, exc)
            self._stored = False

    @property
    def llm(self) -> LLM | None:
        """The translating LLM (built on first use), or None for a replay-only translator."""
        if self._llm is None and self._make_llm is not None:
            # built once: a model that fails to load is not tried again for every question
            make, self._make_llm = self._make_llm, None
            self._llm = make()
        return self._llm

    @property
    def model(self) -> str | None:
        """The LLM's model file name, not its path (a cache moved to another machine still
        matches); None for a replay-only translator."""
        llm = self.llm
        return Path(llm.metadata.model_name or type(llm).__name__).name if llm else None

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path)
        try:
            with db:  # commits
                yield db
        finally:
            db.close()

    def cached(self, text: str) -> str | None:
        """The cached translation of ``text`` by this translator's model (any model's when it
        has none; the latest wins)."""
        if not self._stored:
            return self._memory.get(text)
        with self._db() as db:
            row = db.execute(
                "SELECT translation FROM translations WHERE text = ? "
                "AND model = coalesce(?, model) ORDER BY rowid DESC",
                (text, self.model),
            ).fetchone()
        return None if row is None else str(row[0])

    def seconds(self) -> list[float]:
        """How long each cached translation took the LLM, in seconds."""
        if not self._stored:
            return []
        with self._db() as db:
            rows = db.execute(
                "SELECT seconds FROM translations WHERE model = coalesce(?, model)", (self.model,)
            ).fetchall()
        return [float(s) for (s,) in rows]

    def __call__(self, text: str) -> str:
        key = text.strip()
        if not needs_translation(key):
            return text
        try:
            llm = self.llm
            found = self.cached(key)
        except Exception as exc:  # the model would not load: search the original
            log.warning("no translation, searching the question as it is: %s", exc)
            self.missing += 1
            return text
        if found is not None:
            return found
        if llm is None:
            self.missing += 1
            return text
        started = time.perf_counter()
        try:
            reply = llm.complete(PROMPT.format(text=key)).text
        except Exception as exc:  # any LLM failure: search the original
            log.warning("translation failed, searching the question as it is: %s", exc)
            self.missing += 1
            return text
        translation = parse_translation(reply, key)
        if translation is None:
            self.missing += 1
            return text
        self._memory[key] = translation
        if self._stored:
            try:
                with self._db() as db:
                    db.execute(
                        "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?)",
                        (self.model, key, translation, round(time.perf_counter() - started, 3)),
                    )
            except sqlite3.Error as exc:  # a full disk, a locked file: keep it in memory
                log.warning("translation not cached: %s", exc)
                self._stored = False
        return translation
