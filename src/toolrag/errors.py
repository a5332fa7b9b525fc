"""User-facing errors.

A :class:`ToolragError` carries one sentence a person can act on. The CLI prints it on one line
(never a traceback) and exits non-zero; the Python API raises it.
"""

from __future__ import annotations


class ToolragError(Exception):
    """An error whose message says what went wrong and what to run or change."""

    exit_code: int = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        return f"{self.message} {self.hint}".strip() if self.hint else self.message


class ConfigError(ToolragError):
    """A setting is missing or invalid (an API key, a provider name, a path)."""


class ModelMissingError(ToolragError):
    """The local model weights or runtime are not installed."""


class IndexMissingError(ToolragError):
    """A content index has not been built yet."""


class IngestError(ToolragError):
    """A source file could not be read into the index (corrupt image, no OCR engine, bad file)."""


class InputError(ToolragError):
    """The question or an argument given by a person is unusable (empty, unknown project)."""


class LLMServerError(ToolragError):
    """An OpenAI-compatible LLM server failed a request, or cannot do what the mode needs."""


class ContextOverflowError(LLMServerError):
    """The LLM server refused a prompt longer than the model's context."""
