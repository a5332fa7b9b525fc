"""The ``toolrag`` command line (typer): one module per command group, over the public API."""

from toolrag.cli.main import app

__all__ = ["app"]
