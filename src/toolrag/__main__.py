"""`python -m toolrag`."""

from toolrag.cli.main import app

app()
