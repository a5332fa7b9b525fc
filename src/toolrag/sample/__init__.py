"""The sample domain a new user runs first: the construction company's field API, the demo's
question pick, and the public Chinook database for the SQL tests and benchmarks."""

from typing import Any

__all__ = ["running_server"]


def __getattr__(name: str) -> Any:
    # the field API needs the ``sample`` extra (FastAPI): imported only when asked for
    if name == "running_server":
        from toolrag.sample.field_api import running_server

        return running_server
    raise AttributeError(name)
