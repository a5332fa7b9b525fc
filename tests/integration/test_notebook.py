"""The exploration notebook executes top to bottom (scripted LLM, sample indexes)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from toolrag import Settings

from ..conftest import REPO, final, react


def test_notebook_executes(
    sample_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(
        json.dumps(
            [
                json.dumps(  # the router's decision (section 6)
                    {
                        "action": "call_tools",
                        "calls": [
                            {"tool": "get_project_schedule", "arguments": {"project": "GRB-107"}}
                        ],
                    }
                ),
                react("get_project_schedule", {"project": "GRB-107"}),
                final("Substantial completion is planned for 2027-01-29."),
            ]
        )
    )
    monkeypatch.setenv("TOOLRAG_INDEX_DIR", str(sample_settings.index_dir))
    monkeypatch.setenv("TOOLRAG_LLM_PROVIDER", "scripted")
    monkeypatch.setenv("TOOLRAG_SCRIPTED_TURNS_FILE", str(turns))
    nb = nbformat.read(REPO / "notebooks" / "explore.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    ).execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "2027-01-29" in outputs and "get_project_schedule" in outputs
    assert "GRB-101-CTR-001" in outputs  # the liquidated-damages search found the contract
    assert "get_project_schedule {'project': 'GRB-107'} -> ok" in outputs  # the router
    assert "What is the capital of France? -> []" in outputs  # the gate: no tool fits
    assert "When is substantial completion planned f -> ['get_project_schedule'" in outputs
    assert "objectindex-default {'R@1'" in outputs and "best {'R@1'" in outputs
