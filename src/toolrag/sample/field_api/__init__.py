"""The sample field REST API of the construction domain (FastAPI, 127.0.0.1 only)."""

from toolrag.sample.field_api.app import create_app
from toolrag.sample.field_api.server import running_server, serve

__all__ = ["create_app", "running_server", "serve"]
