"""Real HTTP servers on 127.0.0.1 for the REST tests: httpbin (Flask, with flasgger's Swagger
document at /spec.json) and a deliberately broken server (hangs, 503s, redirects off-host)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from werkzeug.serving import make_server


@contextmanager
def httpbin_server() -> Iterator[str]:
    from httpbin import app

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


class _Broken(BaseHTTPRequestHandler):
    hits: dict[str, int] = {}  # noqa: RUF012 - shared counters per path

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.hits[self.path] = self.hits.get(self.path, 0) + 1
        if self.path.startswith("/hang"):
            time.sleep(5)
            return
        if self.path.startswith("/flaky"):  # 503 twice, then 200
            if self.hits[self.path] <= 2:
                self._send(503, b'{"detail": "busy"}')
            else:
                self._send(200, b'{"ok": true}')
            return
        if self.path.startswith("/unavailable"):
            self._send(503, b'{"detail": "down"}')
            return
        if self.path.startswith("/offhost"):
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()
            return
        if self.path.startswith("/badjson"):
            self._send(200, b'{"truncated": ')
            return
        self._send(404, b'{"detail": "no such thing"}')

    do_POST = do_GET

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def broken_server() -> Iterator[str]:
    _Broken.hits = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Broken)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join(5)
