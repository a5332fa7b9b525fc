"""A headline benchmark's figures as a committed file: ``benchmarks/results/<name>.json``, with
the commit, date, machine and command that produced them (``scripts/render_benchmarks.py``
turns the files into the tables of docs/benchmarks.md and README.md)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
_STARTED = time.perf_counter()


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine() -> dict[str, Any]:
    """The machine a benchmark ran on: cores, 1-minute load, CPU model, GPU, platform."""
    try:
        load = round(os.getloadavg()[0], 2)
    except OSError:
        load = None
    return {
        "cores": os.cpu_count(),
        "load_1m": load,
        "cpu": _cpu_model(),
        "gpu": None,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def result_name(name: str, **partial: Any) -> str:
    """``name`` with a suffix for each option that makes the run partial (a truthy value):
    ``result_name("tool_retrieval", limit=400)`` is ``tool_retrieval_limit400``, so a partial
    run never overwrites the full run's file. A run with another embedding model than the
    default is named for it too."""
    from toolrag import Settings
    from toolrag.models import DEFAULT_EMBED_MODEL

    parts = [name]
    for key, value in partial.items():
        if value is None or value is False or value == 0 or value == "":
            continue
        text = "" if value is True else str(value).replace(",", "-").replace("+", "-")
        parts.append(f"{key}{text}")
    embed = Settings().embed_model
    if embed != DEFAULT_EMBED_MODEL:  # another embedding model (TOOLRAG_EMBED_MODEL)
        parts.append("embed-" + Path(embed).name)
    return "_".join(parts).replace("/", "-")


def _main() -> str | None:
    """The benchmark module that runs (``batch_scale`` for ``python -m benchmarks.batch_scale``),
    so that a partial run's result name (``batch_scale_questions200``) is not taken for it."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", "") or ""
    return name.removeprefix("benchmarks.") if name.startswith("benchmarks.") else None


# a URL's "user:password@" (linear: a match starts at "//" and stops at the next "/" or "@")
_USERINFO = re.compile(r"//[^/@\s]+@")


def _settings_env() -> list[str]:
    """The ``TOOLRAG_*`` settings the run's environment set (``NAME=value``, sorted), so the
    command reproduces it. Names with a secret's word in them (``_KEY``, ``_TOKEN``,
    ``_PASSWORD``) are left out, and a URL's user and password are masked."""
    secret = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"}
    return [
        f"{k}={shlex.quote(_USERINFO.sub('//***@', v))}"
        for k, v in sorted(os.environ.items())
        if k.startswith("TOOLRAG_") and not secret & set(k.split("_"))
    ]


def write_result(
    name: str,
    figures: dict[str, Any],
    *,
    module: str | None = None,
    argv: Sequence[str] | None = None,
    seconds: float | None = None,
) -> Path:
    """Write ``benchmarks/results/<name>.json`` and return its path. ``module`` is the
    benchmark's module under ``benchmarks`` (by default ``name``), ``argv`` its arguments (by
    default ``sys.argv[1:]``), ``seconds`` its wall time (by default since this module was
    imported, that is since the benchmark started)."""
    commit = _git("rev-parse", "--short", "HEAD")
    status = _git("status", "--porcelain")
    args = list(sys.argv[1:] if argv is None else argv)
    record: dict[str, Any] = {"name": name, "commit": commit}
    if status:
        record["dirty"] = True  # the working tree differed from the commit
    record |= {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": " ".join(
            [*_settings_env(), "python", "-m", f"benchmarks.{module or _main() or name}", *args]
        ),
        "seconds": round(time.perf_counter() - _STARTED if seconds is None else seconds, 1),
        "figures": figures,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"Result written to {path.relative_to(ROOT)}")
    return path
