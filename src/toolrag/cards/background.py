"""Example requests written in the background for the tool cards that have none.

A user's own pool (their database's tools, their API's operations, an MCP server's tools) comes
without example requests, and the tool index finds a tool better when it has some
(:mod:`toolrag.cards.synthetic`). ``toolrag index`` (``Toolbox.index``) therefore hands the
cards that have none to a separate, low-priority process, which has the configured LLM write
them into the same cache ``toolrag tools synth`` fills, while the user goes on asking. The
toolbox picks them up at the next question once the process has finished (it touches
:func:`done_marker`).

The process gets the cards in a JSON file and the settings through its environment, so a
``Toolbox(Settings(...))`` built in Python hands over what it was given. One writer at a time:
it holds a lock beside the cache, and a second start while it runs does nothing.

    python -m toolrag.cards.background CARDS.json     # what the toolbox starts
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import SecretStr

from toolrag.cards.card import ToolCard
from toolrag.settings import Settings


def todo_file(settings: Settings) -> Path:
    """The cards the writer is handed."""
    return settings.state_dir / "synthetic.todo.json"


def log_file(settings: Settings) -> Path:
    """What the writer prints (progress, errors)."""
    return settings.state_dir / "synthetic.log"


def done_marker(settings: Settings) -> Path:
    """Touched when a writer finishes: its JSON says when, and for how many cards."""
    return settings.state_dir / "synthetic.done"


def _lock(settings: Settings) -> FileLock:
    return FileLock(str(settings.state_dir / ".synthetic.writer.lock"), timeout=0)


def running(settings: Settings) -> bool:
    """Whether a writer holds the lock now."""
    lock = _lock(settings)
    try:
        lock.acquire()
    except Timeout:
        return True
    except OSError:  # a state folder that cannot be written: no writer can run there
        return False
    lock.release()
    return False


def settings_env(settings: Settings) -> dict[str, str]:
    """The settings as ``TOOLRAG_*`` variables (complex values as JSON), for a child process
    that must use exactly these: a secret goes as its value, in the child's environment only."""
    env: dict[str, str] = {}
    dumped = settings.model_dump(mode="json")
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if value is None:
            continue
        if isinstance(value, SecretStr):
            text = value.get_secret_value()
        elif isinstance(value, str | Path | int | float | bool):
            text = str(value)
        else:
            text = json.dumps(dumped[name])
        env[f"TOOLRAG_{name.upper()}"] = text
    return env


def start(settings: Settings, cards: Sequence[ToolCard]) -> int | None:
    """Start a writer for ``cards`` in its own process group (it outlives a CLI command);
    its pid, or None when one is running already (it will not see these cards: the next
    ``toolrag index`` starts another for what is still missing)."""
    if not cards or running(settings):
        return None
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    todo = todo_file(settings)
    todo.write_text(json.dumps([c.model_dump(mode="json") for c in cards]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRAG_")}
    env |= settings_env(settings)
    env.setdefault("HF_HUB_OFFLINE", "1")
    with log_file(settings).open("a") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "toolrag.cards.background", str(todo)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    return process.pid


def write(settings: Settings, cards: Sequence[ToolCard], llm: Any = None) -> int:
    """Have the LLM (``llm``, else the configured one) write requests for the cards that have
    none cached; how many it wrote for. Holds the writer lock; touches the done marker."""
    from toolrag.cards.synthetic import SyntheticQueries

    lock = _lock(settings)
    try:
        lock.acquire()
    except Timeout:
        print("another writer is running; nothing to do", flush=True)
        return 0
    try:
        if llm is None:
            from toolrag.models.llms import make_llm

            llm = make_llm(settings)
        store = SyntheticQueries(settings.synthetic_db, llm)

        def progress(done: int, total: int) -> None:
            print(f"{time.strftime('%H:%M:%S')} wrote requests for {done}/{total}", flush=True)

        written = store.fill(cards, on_progress=progress)
        payload = {"finished": time.time(), "written": written, "cards": len(cards)}
        done_marker(settings).write_text(json.dumps(payload) + "\n")
        return written
    finally:
        lock.release()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m toolrag.cards.background CARDS.json", file=sys.stderr)
        return 2
    with contextlib.suppress(OSError):
        os.nice(10)  # the user's questions come first
    settings = Settings()
    cards = [ToolCard.model_validate(c) for c in json.loads(Path(args[0]).read_text())]
    print(f"{time.strftime('%H:%M:%S')} writing requests for {len(cards)} card(s)", flush=True)
    try:
        written = write(settings, cards)
    except Exception as exc:  # the log is the only place a background failure shows
        print(f"failed: {type(exc).__name__}: {exc}", flush=True)
        return 1
    print(f"{time.strftime('%H:%M:%S')} done: wrote requests for {written} card(s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
