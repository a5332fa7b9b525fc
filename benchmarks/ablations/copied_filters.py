"""Filters copied from a shown example's question: how often leaving them out removes a right
argument, replayed on the recorded BFCL router decisions (no model runs).

The router now leaves out of a call each optional argument that is a listed value (an
``enum``) or a period bound that a shown example question names and this question does not
(``drop_copied_filters`` in ``toolrag.guard.grounding.copied``). The BFCL router records
(``benchmarks/records/route_bfcl.jsonl``) were written before that rule. For each question's
latest ``dynamic`` record that was offered tools, the examples the router showed are chosen
again as ``benchmarks.route`` chose them (the same 200 items, example pool, store and
``Router.plan`` over the recorded offer). Where the prompt hashes as the record's, these are the
examples shown; a question of several parts recorded before the router chose examples part by
part gets today's choice (``examples``: "approximate", ``examples_exact`` counts the others).
The rule is applied to the recorded calls, and each argument it leaves out is judged against
BFCL's possible answers with the evaluation's own check (``argument_hits``):

- ``correct``: the value is one of the parameter's options and leaving it out is not allowed
  (harmful: the call loses a right filter);
- ``wrong``: the value is none of the options (helpful: the call loses a wrong filter);
- ``omission_allowed``: the parameter is absent from the possible answer or ``""`` is among its
  options (``value_right`` says whether the value left out was right anyway);
- ``not_judged``: the call is not the expected tool's (or no tool was expected).

The argument accuracy of the decisions before and after is the evaluation's own score
(``score``, as ``benchmarks.route`` reports it). The rule runs here on the final recorded calls;
live, it runs on each reply before the repair round and the other grounding rules.

    python -m benchmarks.ablations.copied_filters

Writes ``benchmarks/results/copied_filters.json``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.results import write_result
from benchmarks.route import bfcl_set
from toolrag import ScriptedLLM, Settings, make_embedding
from toolrag.evaluation import RouteQuery, argument_hits, prompt_key, score, stub_tools
from toolrag.guard.grounding import drop_copied_filters
from toolrag.routing import ExampleStore, RouteDecision, Router, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "benchmarks" / "records" / "route_bfcl.jsonl"
K_TOOLS, K_EXAMPLES = 5, 8  # benchmarks.route's defaults, as the records were written


def latest_records(path: Path) -> dict[str, dict[str, Any]]:
    """Each question's latest ``dynamic`` record that was offered tools (a gated record offered
    none, and an earlier record of a changed offer was routed again)."""
    latest: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            if rec["mode"] == "dynamic" and rec["offered"]:
                latest[rec["id"]] = rec
    return latest


def verdict(query: RouteQuery, tool: str, key: str, value: Any) -> tuple[str, bool | None]:
    """How an argument left out of a call of ``tool`` stood against the possible answer:
    (verdict, whether its value was one of the options; None when not judged)."""
    if not query.expected_tools or tool != query.expected_tools[0]:
        return "not_judged", None
    if key not in query.expected_args:
        return "omission_allowed", None
    want = query.expected_args[key]
    right = argument_hits({key: want}, {key: value})[0] == 1
    options = want if isinstance(want, list) else [want]
    if "" in options:
        return "omission_allowed", right
    return ("correct" if right else "wrong"), right


def main() -> None:
    t0 = time.perf_counter()
    cards, queries, examples = bfcl_set(200, 0)
    records = latest_records(RECORDS)
    tools = {t.metadata.get_name(): t for t in stub_tools(cards)}
    embed = make_embedding(Settings())
    drops: list[dict[str, Any]] = []
    before: list[list[ToolCallSpec]] = []
    after: list[list[ToolCallSpec]] = []
    changed: list[dict[str, Any]] = []
    exact = with_examples = 0
    with tempfile.TemporaryDirectory(prefix="toolrag-copied-") as tmp:
        # the store of benchmarks.route's run_route_eval, built in the same order
        store = ExampleStore(Path(tmp) / "examples.sqlite", embed)
        store.register_test_questions((q.id, q.query) for q in queries)
        store.seed(cards)
        store.add_many(examples, strict=False)
        router = Router(ScriptedLLM(), store, mode="dynamic", k_examples=K_EXAMPLES)
        for q in queries:
            rec = records.get(q.id)
            calls = [ToolCallSpec.model_validate(c) for c in rec["calls"]] if rec else []
            before.append([c.model_copy(deep=True) for c in calls])
            if rec is None:
                after.append(calls)
                continue
            offer = [tools[name] for name in rec["offered"]]
            chosen, prompt = router.plan(q.query, offer)
            same = prompt_key(prompt) == rec.get("prompt")
            exact += same
            shown = [e.query for _, e in chosen]
            with_examples += bool(shown)
            decision = RouteDecision(action="call_tools", calls=calls)
            notes = drop_copied_filters(q.query, decision, shown, tools, vocabulary=None)
            after.append(decision.calls)
            if not notes:
                continue
            item_drops = []
            for old, new in zip(before[-1], decision.calls, strict=True):
                for key, value in old.arguments.items():
                    if key in new.arguments:
                        continue
                    kind, right = verdict(q, old.tool, key, value)
                    item_drops.append(
                        {"id": q.id, "tool": old.tool, "key": key, "value": value,
                         "verdict": kind, "value_right": right}
                    )  # fmt: skip
            drops += item_drops
            changed.append(
                {"id": q.id, "question": q.query, "notes": notes, "examples_shown": shown,
                 "examples_exact": same, "drops": item_drops}
            )  # fmt: skip
    replayed = sum(q.id in records for q in queries)
    valid = [True] * len(queries)
    seconds = [0.0] * len(queries)
    report_before = score("dynamic", queries, before, valid, 0, seconds)
    report_after = score("dynamic", queries, after, valid, 0, seconds)
    counts = Counter(d["verdict"] for d in drops)
    figures: dict[str, Any] = {
        "records": str(RECORDS.relative_to(ROOT)),
        "examples": "exact" if exact == replayed else "approximate",
        "examples_exact": exact,
        "decisions_replayed": replayed,
        "decisions_with_examples": with_examples,
        "decisions_changed": len(changed),
        "arguments_dropped": len(drops),
        "dropped_correct": counts["correct"],
        "dropped_wrong": counts["wrong"],
        "dropped_omission_allowed": counts["omission_allowed"],
        "dropped_omission_allowed_value_wrong": sum(
            d["verdict"] == "omission_allowed" and d["value_right"] is False for d in drops
        ),
        "dropped_not_judged": counts["not_judged"],
        "argument_accuracy_before": report_before.argument_accuracy,
        "argument_accuracy_after": report_after.argument_accuracy,
        "n_argument_checks": report_before.n_argument_checks,
        "drops": drops,
        "changed": changed,
    }
    if exact < replayed:
        figures["examples_note"] = (
            f"{exact} of {replayed} prompts hash as recorded, so their examples are the ones "
            "shown; for the others today's router chooses the examples (it now chooses them "
            "part by part for a question of several parts), which may differ from those shown"
        )
    write_result(
        "copied_filters", figures, module="ablations.copied_filters",
        seconds=time.perf_counter() - t0,
    )  # fmt: skip
    print(
        f"replayed {replayed} dynamic decisions ({exact} with the recorded prompt's hash), "
        f"{len(changed)} changed; {len(drops)} arguments left out: {counts['correct']} correct "
        f"(harmful), {counts['wrong']} wrong (helpful), {counts['omission_allowed']} omission "
        f"allowed, {counts['not_judged']} not judged"
    )
    print(
        f"argument accuracy {report_before.argument_accuracy} -> "
        f"{report_after.argument_accuracy} ({report_before.n_argument_checks} checks)"
    )
    for d in drops:
        print(f"  {d['id']}: {d['tool']}.{d['key']}={d['value']!r} {d['verdict']}")


if __name__ == "__main__":
    main()
