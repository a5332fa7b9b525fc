"""False alarms of the router's grounding checks on arguments nobody here wrote.

The router sends an argument value the question does not give (an id or code, or a name the
prompt showed) to its repair round (``toolrag.guard.grounding.values``). A check like that must not
fire on right calls. This runs it over the ground-truth calls of BFCL's 1,911 single-call items
(``bfcl.load``: simple_python, multiple, live_simple, live_multiple), each with only its own tool
offered and no examples shown, which is the strictest setting (no example can map a name to a
code). An argument counts as flagged when every value BFCL accepts for it is flagged. No model
runs; it takes seconds.

    .venv/bin/python -m benchmarks.grounding_bfcl [--out runs/grounding_bfcl.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.datasets import bfcl
from benchmarks.results import write_result
from toolrag.cards import load_tool_list
from toolrag.evaluation import stub_tools
from toolrag.guard.grounding import ungrounded_values
from toolrag.routing import RouteDecision, ToolCallSpec

ROOT = Path(__file__).resolve().parents[1]


def flagged(query: str, tool: Any, arguments: dict[str, Any]) -> list[tuple[str, Any]]:
    """The arguments whose every accepted value the checks would send back."""
    name = tool.metadata.get_name()
    bad = []
    for key, value in arguments.items():
        options = [o for o in (value if isinstance(value, list) else [value]) if o != ""]
        calls = [ToolCallSpec(tool=name, arguments={key: o}) for o in options]
        if options and all(
            ungrounded_values(
                query, RouteDecision(action="call_tools", calls=[c]), [], {name: tool}
            )
            for c in calls
        ):
            bad.append((key, options[0]))
    return bad


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "grounding_bfcl.json")
    args = parser.parse_args()
    tools_path, queries_path = bfcl.load(ROOT / "runs" / "bfcl")
    tools = {t.metadata.get_name(): t for t in stub_tools(load_tool_list(tools_path))}
    items = [json.loads(line) for line in queries_path.read_text().splitlines() if line.strip()]
    alarms = []
    for q in items:
        bad = flagged(q["query"], tools[q["expected_tools"][0]], q.get("expected_args") or {})
        if bad:
            alarms.append({"id": q["id"], "query": q["query"][:200], "arguments": bad})
    report = {
        "benchmark": "grounding_bfcl",
        "items": len(items),
        "flagged": len(alarms),
        "flagged_rate": round(len(alarms) / len(items), 4),
        "alarms": alarms,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    write_result("grounding_bfcl", json.loads(json.dumps(report, default=str)))
    for a in alarms:
        print(f"  {a['id']}: {a['arguments']}")
    print(f"{len(alarms)} of {len(items)} ground-truth calls flagged; JSON written to {args.out}")


if __name__ == "__main__":
    main()
