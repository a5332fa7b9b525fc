"""Writes notebooks/explore.ipynb from the cells below (kept as code so diffs stay readable).

Run: .venv/bin/python scripts/make_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat

CELLS = [
    (
        "md",
        "# Exploring toolrag\n\nThe content indexes, the tools over them, tool retrieval and "
        "the router, a small evaluation, and the agent answering a question with its trace. "
        "Run by hand it uses the configured LLM (the local model by default); the test suite "
        "runs it with the `scripted` LLM.",
    ),
    (
        "code",
        "import os\nfrom pathlib import Path\n\n"
        "# Run from the repository root so data/ and indexes/ resolve.\n"
        "if Path.cwd().name == 'notebooks':\n    os.chdir('..')\n\n"
        "from toolrag import Toolbox\n\ntb = Toolbox()\n"
        "tb.settings.data_dir, tb.settings.index_dir",
    ),
    (
        "md",
        "## 1. Content indexes\n\nThe collections of `toolspecs/collections.yaml`, each in its "
        "own LanceDB table; `index()` is incremental: unchanged files are skipped.",
    ),
    (
        "code",
        "reports = tb.index()\n"
        "for r in reports:\n"
        "    print(f'{r.collection:<11} rows={r.rows_total:>4} added={len(r.added)} '\n"
        "          f'updated={len(r.updated)} unchanged={r.unchanged} errors={len(r.errors)}')",
    ),
    (
        "md",
        "## 2. Hybrid search with scores\n\nDense (cosine) and BM25 rankings fused by "
        "reciprocal rank; filters are the collection's typed fields.",
    ),
    (
        "code",
        "from toolrag import FieldFilters\n\n"
        "documents = tb.collection_indexes['documents']\n"
        "hits = documents.search('liquidated damages per calendar day', k=5,\n"
        "                        filters=FieldFilters(equals={'document_type': 'contract'}))\n"
        "for h in hits:\n"
        "    print(f'{h.score:.4f} cos={h.similarity} {h.doc_id:<18} {h.source}')",
    ),
    ("md", "## 3. The tools the agent sees\n\nEach returns the `ToolResult` envelope."),
    (
        "code",
        "tools = {t.metadata.name: t for t in tb.tools()}\n"
        "r = tools['search_blueprints'].call(query='framing plan', "
        "start_date='2026-01-01', end_date='2026-03-31')\n"
        "for row in r.raw_output.data:\n"
        "    print(row['sheet'], row['title'], row['date'], row['project'])",
    ),
    (
        "md",
        "## 4. SQL and REST tools\n\n`run_sql` is read-only in three layers (sqlglot check, "
        "read-only connection, timeout and row cap); the field API's tools are built from its "
        "OpenAPI document and called over HTTP on 127.0.0.1.",
    ),
    (
        "code",
        "r = tools['run_sql'].call(sql='SELECT status, COUNT(*), SUM(amount) FROM invoices '\n"
        "                               'GROUP BY status ORDER BY status')\n"
        "print(r.raw_output.data['rows'])\n"
        "print(tools['run_sql'].call(sql='DELETE FROM invoices').raw_output.error_message)\n\n"
        "from toolrag.sample import running_server\n\n"
        "with running_server(tb.settings.data_dir) as url:\n"
        "    os.environ['TOOLRAG_FIELD_API_URL'] = url\n"
        "    field = {t.metadata.name: t for s in Toolbox().rest_specs for t in s.to_tool_list()}\n"
        "    delays = field['list_weather_delays'].call(project='GRB-107').raw_output\n"
        "    print('days lost to weather at GRB-107:', delays.data['body']['total_days_lost'])\n"
        "    os.environ.pop('TOOLRAG_FIELD_API_URL')",
    ),
    (
        "md",
        "## 5. Guarded calls\n\nEvery call goes through the guard: `delete` and `external` "
        "tools wait for a person (here an `approve` callback that says no), writes are "
        "idempotent, and every call lands in the audit log with its arguments redacted.",
    ),
    (
        "code",
        "import tempfile\n\n"
        "state = Path(tempfile.mkdtemp())\n"
        "with running_server(tb.settings.data_dir) as url:\n"
        "    os.environ['TOOLRAG_FIELD_API_URL'] = url\n"
        "    gb = Toolbox(tb.settings.model_copy(update={'state_dir': state}),\n"
        "                 approve=lambda request: False)\n"
        "    r = gb.call('cancel_inspection', inspection_id='INSP-101-06')\n"
        "    print(r.error_code, '-', r.error_message)\n"
        "    args = dict(project='GRB-101', subject='Door hardware', question='Which lever set?',\n"
        "                idempotency_key='nb-1')\n"
        "    first = gb.call('create_rfi_draft', **args)\n"
        "    again = gb.call('create_rfi_draft', **args)\n"
        "    print(first.data['body']['draft_id'], 'replayed:', again.idempotent_replay)\n"
        "    os.environ.pop('TOOLRAG_FIELD_API_URL')\n"
        "for record in gb.guard.audit.tail(3):\n"
        "    print(record.tool, record.status, record.arguments)",
    ),
    (
        "md",
        "## 6. Tool retrieval, then the router's decision\n\nThe ToolIndex ranks the tools "
        "for a question (score and cosine), and a `gate` (a cosine; `TOOLRAG_TOOL_GATE` for the "
        'agent) answers "no tool fits" when none of the top tools reaches it; the router turns '
        "the question and those tools into validated calls, run through the guard, with "
        "few-shot examples chosen by "
        "similarity, most by the shape of the request (its names and ids masked) and two by "
        "the whole question. Every decision is logged and can be rated.",
    ),
    (
        "code",
        "question = 'When is substantial completion planned for the Summit Ridge Hotel?'\n"
        "for hit in tb.tool_index.retrieve(question, k=5):\n"
        "    print(f'{hit.score:.4f} cos={hit.similarity} {hit.name}')\n"
        '# "No tool fits": with a gate, a question none of whose top tools reaches the cosine '
        "gets none\n"
        "for q in (question, 'What is the capital of France?'):\n"
        "    print(q[:40], '->', [h.name for h in tb.tool_index.retrieve(q, k=3, gate=0.2)])\n\n"
        "routed = tb.route(question)\n"
        "print('examples shown:', len(routed.examples), '| valid:', routed.valid)\n"
        "calls = routed.decision.calls if routed.valid and routed.decision else []\n"
        "print(routed.decision.action if routed.decision else routed.errors)\n"
        "for call, result in zip(calls, routed.results):\n"
        "    print(call.tool, call.arguments, '->', 'ok' if result.success else "
        "result.error_code)\n"
        "tb.rate_decision(routed.id, good=True)",
    ),
    (
        "md",
        "## 7. A small evaluation, with a plot\n\nTool retrieval on the sample test "
        "questions: toolrag's ToolIndex against plain LlamaIndex `ObjectIndex`, same "
        "embedding model (`toolrag eval tools` does the same on any pool).",
    ),
    (
        "code",
        "import matplotlib.pyplot as plt\n"
        "from toolrag import RetrievalQuery, load_questions, run_tool_eval\n\n"
        "qs = [RetrievalQuery(id=q.id, query=q.query, expected=q.expected_tools)\n"
        "      for q in load_questions(Path('data/questions/test.jsonl'))]\n"
        "reports = run_tool_eval(tb.cards(), qs, ['objectindex-default', 'best'], tb.embed)\n"
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "for n, r in enumerate(reports):\n"
        "    ax.bar([k + n * 0.35 for k in range(3)], list(r.recall.values()), 0.35, "
        "label=r.strategy)\n"
        "    print(r.strategy, {f'R@{k}': round(v, 3) for k, v in r.recall.items()})\n"
        "ax.set_xticks([k + 0.17 for k in range(3)], ['R@1', 'R@5', 'R@10'])\n"
        "ax.set_ylim(0, 1)\nax.legend()\nplt.show()",
    ),
    ("md", "## 8. Ask the agent\n\nThe answer carries its sources and the tool-call trace."),
    (
        "code",
        "answer = tb.ask('When is substantial completion planned for the Summit Ridge "
        "Hotel?')\nprint(answer.answer)\nfor s in answer.sources[:3]:\n    print(' source:', "
        "s.file, s.locator)\nfor step in answer.trace:\n    print(' step', step.step, step.tool, "
        "step.arguments, 'ok' if step.success else step.error_code)",
    ),
]


def main() -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
        for kind, src in CELLS
    ]
    out = Path(__file__).resolve().parents[1] / "notebooks" / "explore.ipynb"
    nbformat.write(nb, out)
    print(out)


if __name__ == "__main__":
    main()
