"""OpenAI-compatible servers on 127.0.0.1 serving the sample GGUF, for the tests of the
``openai_like`` path (tests/integration/test_openai_server.py): llama-cpp-python's own server,
and llama.cpp's ``llama-server`` built from the sources it vendors (scripts/llama_server.sh).

``python -m llama_cpp.server`` (the ``llama-cpp-python[server]`` extra) runs in a subprocess
with the same context and threads the local path uses, in one of the two ChatML formats Qwen2.5
needs: ``chatml`` for the ReAct modes, ``chatml-function-calling`` (it accepts ``tools``, but
HTML-escapes the prompt and drops ``tool`` messages) for the ``function`` mode. See
docs/llm-servers.md.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]

#: The model name the server answers to (``--model_alias``): what TOOLRAG_LLM_MODEL names.
MODEL_ALIAS = "qwen2.5-coder-1.5b"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_cpp_server(
    model: Path,
    *,
    n_ctx: int = 4096,
    threads: int = 2,
    chat_format: str = "chatml-function-calling",
    log: Path | None = None,
    ready_timeout_s: float = 180.0,
) -> Iterator[str]:
    """Start llama-cpp-python's server, wait until ``/v1/models`` answers, yield its ``/v1``
    base URL, and stop it afterwards. A server that dies or never answers fails with its log's
    tail."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
        "--n_batch", "256", "--chat_format", chat_format,
    ]  # fmt: skip
    with _serving(cmd, port, log, ready_timeout_s) as base:
        yield base


def llama_server_binary() -> Path:
    """llama.cpp's ``llama-server``, built by scripts/llama_server.sh (cached per
    llama-cpp-python version); ``TOOLRAG_LLAMA_SERVER`` may name another build."""
    named = os.environ.get("TOOLRAG_LLAMA_SERVER")
    if named:
        return Path(named)
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "llama_server.sh")], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"scripts/llama_server.sh failed: {proc.stderr[-2000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


@contextmanager
def llama_server(
    model: Path,
    *,
    n_ctx: int = 4096,
    threads: int = 2,
    log: Path | None = None,
    ready_timeout_s: float = 180.0,
) -> Iterator[str]:
    """Start llama.cpp's own ``llama-server`` with the model's own chat template (``--jinja``:
    native tool calls) and one slot, whose prompt cache keeps the previous request's prefix,
    and yield its ``/v1`` base URL."""
    port = free_port()
    cmd = [
        str(llama_server_binary()),
        "--model", str(model), "--alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--ctx-size", str(n_ctx), "--threads", str(threads), "--threads-batch", str(threads),
        "--batch-size", "256", "--parallel", "1", "--jinja",
    ]  # fmt: skip
    with _serving(cmd, port, log, ready_timeout_s) as base:
        yield base


@contextmanager
def _serving(cmd: list[str], port: int, log: Path | None, ready_timeout_s: float) -> Iterator[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    name = Path(cmd[0]).name if cmd[0] != sys.executable else "llama_cpp.server"
    try:
        deadline = time.monotonic() + ready_timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}): {_tail(log)}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready in {ready_timeout_s}s: {_tail(log)}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if log:
            out.close()  # type: ignore[union-attr]


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return "(no log)"
    return log.read_text(errors="replace")[-2000:]
