"""Run the field API: blocking (``toolrag serve-api``) or in a background thread (demo, tests)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

from toolrag.sample.field_api.app import create_app

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def serve(
    data_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    allow_remote: bool = False,
    state_path: Path | None = None,
) -> None:
    """Serve until interrupted. Only loopback hosts unless ``allow_remote``; writes persist
    in ``state_path`` (SQLite)."""
    if host not in LOCAL_HOSTS and not allow_remote:
        raise ValueError(f"Refusing to bind {host}: the sample API listens on 127.0.0.1 only.")
    uvicorn.run(create_app(data_dir, state_path), host=host, port=port, log_level="warning")


@contextmanager
def running_server(
    data_dir: Path, port: int = 0, timeout_s: float = 15.0, state_path: Path | None = None
) -> Iterator[str]:
    """Start the API on 127.0.0.1 in a thread (port 0: a free one); yield its base URL.
    Writes persist in ``state_path`` (SQLite; None: in memory)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: no 40 ms Nagle/delayed-ACK stall per response
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(create_app(data_dir, state_path), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"The field API did not start at {base}.")
            time.sleep(0.05)
        yield base
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
