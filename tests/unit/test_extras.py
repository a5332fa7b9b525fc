"""Features whose dependency sits in an extra say which extra to install when it is missing."""

from __future__ import annotations

import subprocess
import sys

MISSING = """
import sys
sys.modules[{module!r}] = None  # as if the extra were not installed
from toolrag.errors import ConfigError
try:
    {statement}
except ConfigError as exc:
    print("ConfigError:", exc, "|", exc.hint)
"""


def _run(module: str, statement: str) -> str:
    code = MISSING.format(module=module, statement=statement)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_sample_api_without_fastapi_names_the_sample_extra() -> None:
    out = _run("fastapi", "import toolrag.sample.field_api.app")
    assert "ConfigError: The sample field API needs FastAPI" in out
    assert "toolrag[sample]" in out


def test_the_heatmap_without_matplotlib_names_the_plots_extra() -> None:
    statement = (
        "from toolrag.evaluation.route_eval import RouteReport, save_heatmap\n"
        "    save_heatmap(RouteReport.model_construct(), __import__('pathlib').Path('x.png'))"
    )
    out = _run("matplotlib", statement)
    assert "ConfigError: The heatmap needs matplotlib" in out
    assert "toolrag[plots]" in out


def test_the_library_imports_without_either_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['fastapi'] = None\n"
        "sys.modules['matplotlib'] = None\n"
        "import toolrag, toolrag.cli, toolrag.sample\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
