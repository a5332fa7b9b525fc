"""Write ``tests/fixtures/bfcl_pool.json``: 1,000 functions and 40 single-call queries drawn with a
fixed seed from BFCL (Berkeley Function Calling Leaderboard, Apache-2.0, PyPI ``bfcl-eval``).

The MCP tests serve these functions, with the toolbox's own tools, as a pool of 1,000+ tools and
check that ``search_tools`` finds the right one. Run: ``.venv/bin/python
scripts/make_tool_pool_fixture.py`` (fetches the BFCL wheel once, like benchmarks/datasets/bfcl.py).
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the benchmarks package, when run as a script

from benchmarks.datasets.bfcl import VERSION, load  # noqa: E402

N_TOOLS = 1000
N_QUERIES = 40
SEED = 7


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tools_path, queries_path = load(Path(tmp))
        tools = json.loads(tools_path.read_text())
        queries = [json.loads(line) for line in queries_path.read_text().splitlines()]
    rng = random.Random(SEED)
    picked_queries = rng.sample(
        [q for q in queries if q["id"].startswith(("simple_python", "multiple"))], N_QUERIES
    )
    needed = {q["expected_tools"][0] for q in picked_queries}
    by_name = {t["name"]: t for t in tools}
    others = sorted(n for n in by_name if n not in needed)
    names = sorted(needed) + rng.sample(others, N_TOOLS - len(needed))
    fixture = {
        "source": f"bfcl-eval=={VERSION} (Apache-2.0), scripts/make_tool_pool_fixture.py",
        "tools": [by_name[n] for n in sorted(names)],
        "queries": [
            {"id": q["id"], "query": q["query"], "expected_tools": q["expected_tools"]}
            for q in picked_queries
        ],
    }
    out = REPO / "tests" / "fixtures" / "bfcl_pool.json"
    out.write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({len(fixture['tools'])} tools, {len(fixture['queries'])} queries)")


if __name__ == "__main__":
    main()
