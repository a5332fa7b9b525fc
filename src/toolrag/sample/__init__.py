"""The sample domain a new user runs first: the construction company's field API, the demo's
question pick, the public Chinook database for the SQL tests and benchmarks, and the check that
the sample's sources agree (:func:`check_sample`)."""

from typing import Any

from toolrag.sample.chinook import TABLES, build_chinook_sqlite
from toolrag.sample.consistency import Finding, check_sample  # light: pydantic, yaml, sqlite3
from toolrag.sample.demo import pick_questions

__all__ = [
    "TABLES",
    "Finding",
    "build_chinook_sqlite",
    "check_sample",
    "create_app",
    "pick_questions",
    "running_server",
]


def __getattr__(name: str) -> Any:
    # the field API needs the ``sample`` extra (FastAPI): imported only when asked for
    if name in ("create_app", "running_server"):
        from toolrag.sample import field_api

        return getattr(field_api, name)
    raise AttributeError(name)
