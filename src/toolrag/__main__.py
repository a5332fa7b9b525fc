"""`python -m toolrag`."""

from toolrag.cli import app

app()
