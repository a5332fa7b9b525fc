"""The layer contract (docs/architecture.md): each package imports only those below it, and no
module imports itself back through others, TYPE_CHECKING and function-local imports included."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]


def _cycles() -> list[list[str]]:
    graph = grimp.build_graph("toolrag", exclude_type_checking_imports=False)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(edges):
        if module not in index:
            strong(module)
    return found


def test_no_module_imports_itself_back() -> None:
    assert _cycles() == []


def test_the_layer_contract_holds() -> None:
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(lint).exists():
        pytest.fail("lint-imports is missing: install the dev extra (import-linter)")
    done = subprocess.run([lint], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 kept, 0 broken" in done.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path: Path) -> None:
    """The contract can fail: a copy of the package where the guard imports the toolbox."""
    copy = tmp_path / "src"
    shutil.copytree(REPO / "src" / "toolrag", copy / "toolrag")
    policy = copy / "toolrag" / "guard" / "policy.py"
    policy.write_text(policy.read_text() + "\nfrom toolrag.toolbox import Toolbox  # noqa\n")
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    env = {"PYTHONPATH": str(copy), "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run(
        [lint], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode != 0
    assert "toolrag.guard is not allowed to import toolrag.toolbox" in done.stdout
