"""The benchmarks use public names only: each ``toolrag`` import in ``benchmarks/`` names
``toolrag`` or one of its packages, and a name that package lists in ``__all__`` (the
second-level public API, docs/architecture.md), never a module inside a package nor a name
starting with "_". And every name a package's ``__all__`` lists resolves."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import toolrag

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def toolrag_imports(path: Path) -> list[tuple[int, str, str]]:
    """Every import of ``toolrag`` in the file, module level or not: (line, module, name) in
    line order; ``import toolrag.x`` gives the name ``""``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "toolrag" or node.module.startswith("toolrag."):
                found += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name, "")
                for a in node.names
                if a.name == "toolrag" or a.name.startswith("toolrag.")
            ]
    return sorted(found)


def refusal(module: str, name: str) -> str | None:
    """Why importing ``name`` from ``module`` is not a public import, or None when it is."""
    if name.startswith("_"):
        return f"{name} is private"
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        return f"{module} does not import: {exc}"
    if not hasattr(imported, "__path__"):
        return f"{module} is a module inside a package: import from the package"
    if not name:  # ``import toolrag.retrieval``: the package itself
        return None
    if name not in getattr(imported, "__all__", ()):
        return f"{module}.__all__ does not list {name}"
    return None


def benchmark_files() -> list[Path]:
    return sorted(BENCHMARKS.rglob("*.py"))


def test_the_benchmarks_import_public_names_only() -> None:
    files = benchmark_files()
    assert files, BENCHMARKS
    bad = [
        f"{path.relative_to(BENCHMARKS.parent)}:{line}: from {module} import {name}: {why}"
        for path in files
        for line, module, name in toolrag_imports(path)
        if (why := refusal(module, name)) is not None
    ]
    assert bad == []


def test_the_rule_refuses_a_module_inside_a_package(tmp_path: Path) -> None:
    bench = tmp_path / "bench.py"
    bench.write_text(
        "from toolrag.retrieval.index import ToolIndex\n"
        "from toolrag.evaluation import _schema_model\n"
        "def main():\n"
        "    from toolrag.cards.card import load_tool_list\n"
        "import toolrag.retrieval.index\n"
        "from toolrag.retrieval import ToolIndex\n"
    )
    refused = [(m, n) for _, m, n in toolrag_imports(bench) if refusal(m, n) is not None]
    assert refused == [
        ("toolrag.retrieval.index", "ToolIndex"),
        ("toolrag.evaluation", "_schema_model"),
        ("toolrag.cards.card", "load_tool_list"),
        ("toolrag.retrieval.index", ""),
    ]


def packages() -> list[ModuleType]:
    """``toolrag`` and each package in it (the ``cli`` imports the typer app, kept here too)."""
    found = [toolrag]
    for info in pkgutil.walk_packages(toolrag.__path__, "toolrag."):
        if info.ispkg:
            found.append(importlib.import_module(info.name))
    return found


def test_every_exported_name_of_every_package_resolves() -> None:
    missing = [
        f"{package.__name__}.{name}"
        for package in packages()
        for name in getattr(package, "__all__", ())
        if not hasattr(package, name)
    ]
    assert missing == []


def test_no_package_exports_a_private_name_or_one_twice() -> None:
    for package in packages():
        names = list(getattr(package, "__all__", ()))
        assert len(names) == len(set(names)), package.__name__
        assert [n for n in names if n.startswith("_")] == [], package.__name__


def test_the_packages_the_benchmarks_use_have_an_all() -> None:
    used = {
        module
        for path in benchmark_files()
        for _, module, _ in toolrag_imports(path)
        if hasattr(importlib.import_module(module), "__path__")
    }
    assert {m for m in used if not hasattr(importlib.import_module(m), "__all__")} == set()
