"""`python -m toolrag.cli`: the command line."""

from toolrag.cli.main import app

app()
