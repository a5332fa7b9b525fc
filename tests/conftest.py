"""Shared fixtures: real LanceDB on temporary folders, the real embedding model, the sample data.

The LLM is the only fake (the ``scripted`` LLM); tests marked ``local_llm`` use the real one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# No test starts the background writer of example requests (it would load the local model in a
# process of its own and outlive the test): the tests of that writer turn it on themselves.
# The scripted tests script ReAct turns, so they run in `react` mode; the tests of the other
# modes (and of the default, `router+react`) choose theirs.
os.environ["TOOLRAG_WRITE_REQUESTS"] = "off"
os.environ["TOOLRAG_AGENT_MODE"] = "react"

from toolrag import ScriptedLLM, Settings, Toolbox
from toolrag.sample.field_api import running_server

# what every test's environment holds (subprocesses included: the CLI helpers pass it on)
TEST_ENV = {var: os.environ[var] for var in ("TOOLRAG_WRITE_REQUESTS", "TOOLRAG_AGENT_MODE")}
REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's keys, config file or provider choice."""
    for var in list(os.environ):
        if var.startswith("TOOLRAG_") or var in ("OPENAI_API_KEY", "OPENAI_API_BASE"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TOOLRAG_CONFIG", str(tmp_path / "no-such-toolrag.toml"))
    for var, value in TEST_ENV.items():
        monkeypatch.setenv(var, value)


@pytest.fixture(scope="session")
def sample_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole sample domain indexed once per session (OCR included)."""
    index_dir = tmp_path_factory.mktemp("indexes")
    reports = Toolbox(Settings(data_dir=DATA, index_dir=index_dir)).index()
    errors = [e for r in reports for e in r.errors]
    assert not errors, errors
    return index_dir


@pytest.fixture
def sample_settings(sample_index_dir: Path, tmp_path: Path) -> Settings:
    return Settings(
        data_dir=DATA,
        index_dir=sample_index_dir,
        state_dir=tmp_path / "state",
        llm_provider="scripted",
    )


@pytest.fixture
def toolbox_factory(sample_settings: Settings) -> Iterator[object]:
    def make(turns: list[str]) -> Toolbox:
        return Toolbox(sample_settings, llm=ScriptedLLM(turns))

    yield make


@pytest.fixture(scope="module")
def field_api() -> Iterator[str]:
    """The sample field API on 127.0.0.1, for the REST tools of ``rest_toolbox``."""
    with running_server(DATA) as url:
        yield url


@pytest.fixture
def rest_toolbox(
    field_api: str, monkeypatch: pytest.MonkeyPatch, toolbox_factory: Callable[..., Toolbox]
) -> Callable[[list[object]], Toolbox]:
    monkeypatch.setenv("TOOLRAG_FIELD_API_URL", field_api)
    return toolbox_factory


def react(tool: str, args: dict[str, object], thought: str = "I need a tool.") -> str:
    """One ReAct tool-call turn as the model would write it."""
    return f"Thought: {thought}\nAction: {tool}\nAction Input: {json.dumps(args)}"


def final(answer: str) -> str:
    return f"Thought: I can answer without using any more tools.\nAnswer: {answer}"


# --- SQL databases: the sample SQLite file and a real PostgreSQL server ------------------------
PG_URL_FROM_ENV = os.environ.get("TOOLRAG_TEST_PG_URL")


@pytest.fixture(scope="session")
def construction_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolrag.tools.sql.seed import build_sqlite

    path = tmp_path_factory.mktemp("sqlite") / "construction.sqlite"
    build_sqlite(DATA / "db" / "seed.sql", path)
    return path


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """Base URL of a PostgreSQL server: TOOLRAG_TEST_PG_URL, or a throwaway local cluster."""
    import shutil
    import tempfile

    from .pgserver import postgres_server, server_bin

    if PG_URL_FROM_ENV:
        yield PG_URL_FROM_ENV
        return
    if server_bin() is None:
        message = "PostgreSQL server binaries not found; scripts/test.sh installs them."
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    workdir = Path(tempfile.mkdtemp(prefix="toolrag-pg-"))
    try:
        with postgres_server(workdir) as url:
            yield url
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _pg_database(base_url: str, name: str) -> str:
    """(Re)create database ``name`` on the server; return its SQLAlchemy URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(base_url)
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def construction_pg(pg_server: str) -> str:
    """The sample database loaded into PostgreSQL from the same seed script."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = _pg_database(pg_server, "construction")
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute((DATA / "db" / "seed.sql").read_text(encoding="utf-8"))  # type: ignore[arg-type]
    return url
