"""The guard: unknown names, argument checks, profiles, approval, idempotent writes (threads,
processes, restarts), timeouts that stop the tool's thread, crashes, huge results, the audit
log and redaction. Plain functions as tools; no LLM."""

from __future__ import annotations

import contextvars
import multiprocessing
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.cards.card import ToolCard
from toolrag.guard import (
    AgentProfile,
    ApprovalRequest,
    AuditLog,
    IdempotencyStore,
    ToolGuard,
    redact,
    redact_text,
)
from toolrag.tools.result import ErrorCode, ToolResult
from toolrag.tools.self_timed import SelfTimedTool

EFFECTS: list[str] = []


def _tool(fn: Callable[..., Any], name: str) -> FunctionTool:
    return FunctionTool.from_defaults(fn=fn, name=name)


def get_weather(city: str) -> ToolResult:
    """Current weather of a city."""
    return ToolResult.ok({"city": city, "sky": "clear"})


def create_note(text: str, idempotency_key: str = "") -> ToolResult:
    """Create a note (a write)."""
    EFFECTS.append(text)
    time.sleep(0.05)  # long enough for concurrent callers to overlap
    return ToolResult.ok({"note_id": len(EFFECTS), "text": text})


def delete_note(note_id: int) -> ToolResult:
    """Delete a note."""
    EFFECTS.append(f"deleted {note_id}")
    return ToolResult.ok({"deleted": note_id})


def hang_forever(seconds: int = 3600) -> ToolResult:
    """A tool that never answers."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)
    return ToolResult.ok("finally")


def explode(x: int = 0) -> ToolResult:
    """A tool that raises."""
    raise RuntimeError("disk on fire")


def huge(n: int = 10_000_000) -> ToolResult:
    """A tool that returns 10 MB."""
    return ToolResult.ok("x" * n)


CARDS = [
    ToolCard(name="get_weather", description="Weather."),
    ToolCard(name="create_note", description="Create a note.", side_effect="write"),
    ToolCard(name="delete_note", description="Delete a note.", side_effect="delete"),
    ToolCard(name="hang_forever", description="Hangs.", timeout_s=0.3),
    ToolCard(name="explode", description="Raises."),
    ToolCard(name="huge", description="Huge."),
]
FUNCS = [get_weather, create_note, delete_note, hang_forever, explode, huge]


@pytest.fixture()
def state(tmp_path: Path) -> dict[str, Any]:
    EFFECTS.clear()
    return {
        "audit": AuditLog(tmp_path / "audit.sqlite"),
        "store": IdempotencyStore(tmp_path / "idem.sqlite"),
        "dir": tmp_path,
    }


def _guard(state: dict[str, Any], **kwargs: Any) -> ToolGuard:
    tools = [_tool(f, f.__name__) for f in FUNCS]
    return ToolGuard(tools, CARDS, audit=state["audit"], store=state["store"], **kwargs)


def test_read_call_runs_and_is_audited(state: dict[str, Any]) -> None:
    guard = _guard(state)
    result = guard.call("get_weather", {"city": "Oslo"}, run_id="r1", step=1)
    assert result.success and result.data == {"city": "Oslo", "sky": "clear"}
    (record,) = state["audit"].tail()
    assert (record.tool, record.status, record.run_id) == ("get_weather", "ok", "r1")
    assert record.agent == "toolrag/default" and record.version == "1"


def test_unknown_tool_names_the_closest(state: dict[str, Any]) -> None:
    result = _guard(state).call("get_wether", {"city": "Oslo"})
    assert result.error_code == ErrorCode.UNKNOWN_TOOL
    assert "get_weather" in (result.suggestion or "")
    assert state["audit"].tail()[0].status == "refused"


def test_arguments_are_validated_before_running(state: dict[str, Any]) -> None:
    guard = _guard(state)
    result = guard.call("create_note", {"text": {"not": "a string"}})
    assert result.error_code == ErrorCode.INVALID_ARGUMENT and result.recoverable
    assert "text" in (result.error_message or "")
    assert EFFECTS == []
    big = guard.call("get_weather", {"city": "x" * 50_000})
    assert big.error_code == ErrorCode.TOO_LARGE


def test_read_only_profile_can_neither_see_nor_call_a_write_tool(state: dict[str, Any]) -> None:
    guard = _guard(state, profile=AgentProfile(name="reader", side_effects=["read"]))
    assert "create_note" not in guard.permitted_names()
    assert "get_weather" in guard.permitted_names()
    result = guard.call("create_note", {"text": "hi", "idempotency_key": "k"})
    assert result.error_code == ErrorCode.FORBIDDEN and not result.recoverable
    assert EFFECTS == []
    assert state["audit"].tail()[0].status == "refused"


def test_profile_by_tags_and_names() -> None:
    card = ToolCard(name="list_rfis", tags=["rfi"])
    assert AgentProfile(tools=[], tags=["rfi"]).permits(card)
    assert AgentProfile(tools=["list_*"]).permits(card)
    assert not AgentProfile(tools=["get_*"]).permits(card)


def test_gated_call_never_runs_without_approval(state: dict[str, Any]) -> None:
    guard = _guard(state)  # no approver: refused
    for _ in range(3):  # the model insisting changes nothing
        result = guard.call("delete_note", {"note_id": 7})
        assert result.error_code == ErrorCode.APPROVAL_DENIED and not result.recoverable
    assert EFFECTS == []
    seen: list[ApprovalRequest] = []

    def no(request: ApprovalRequest) -> bool:
        seen.append(request)
        return False

    assert not _guard(state, approver=no).call("delete_note", {"note_id": 7}).success
    assert seen[0].tool == "delete_note" and seen[0].side_effect == "delete"

    def broken(_: ApprovalRequest) -> bool:
        raise RuntimeError("approval service down")

    assert not _guard(state, approver=broken).call("delete_note", {"note_id": 7}).success
    assert EFFECTS == []
    ok = _guard(state, approver=lambda r: True).call("delete_note", {"note_id": 7})
    assert ok.success and EFFECTS == ["deleted 7"]
    statuses = [r.status for r in state["audit"].tail(10)]
    assert statuses == ["denied"] * 5 + ["ok"]


def test_repeated_key_replays_and_survives_a_restart(state: dict[str, Any]) -> None:
    guard = _guard(state)
    first = guard.call("create_note", {"text": "pour slab", "idempotency_key": "k1"})
    again = guard.call("create_note", {"text": "pour slab", "idempotency_key": "k1"})
    assert first.success and not first.idempotent_replay
    assert again.idempotent_replay and again.data == first.data
    restarted = ToolGuard(
        [_tool(f, f.__name__) for f in FUNCS],
        CARDS,
        store=IdempotencyStore(state["dir"] / "idem.sqlite"),
    )
    third = restarted.call("create_note", {"text": "pour slab", "idempotency_key": "k1"})
    assert third.idempotent_replay
    assert EFFECTS == ["pour slab"]
    conflict = guard.call("create_note", {"text": "other", "idempotency_key": "k1"})
    assert conflict.error_code == ErrorCode.CONFLICT
    assert [r.status for r in state["audit"].tail(3)] == ["ok", "replayed", "refused"]


def test_key_derived_from_run_and_step(state: dict[str, Any]) -> None:
    guard = _guard(state)
    a = guard.call("create_note", {"text": "t"}, run_id="run-9", step=2)
    b = guard.call("create_note", {"text": "t"}, run_id="run-9", step=2)
    c = guard.call("create_note", {"text": "t"}, run_id="run-9", step=3)
    assert (a.idempotent_replay, b.idempotent_replay, c.idempotent_replay) == (False, True, False)
    assert EFFECTS == ["t", "t"]


def test_concurrent_threads_with_one_key_cause_one_effect(state: dict[str, Any]) -> None:
    guard = _guard(state)
    results: list[ToolResult] = []

    def call() -> None:
        results.append(guard.call("create_note", {"text": "once", "idempotency_key": "same"}))

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert EFFECTS == ["once"]
    assert sum(not r.idempotent_replay for r in results) == 1
    assert all(r.success and r.data == results[0].data for r in results)


_PROCESS_SCRIPT = """
import sys, time
from pathlib import Path
from llama_index.core.tools import FunctionTool
from toolrag.cards.card import ToolCard
from toolrag.guard import IdempotencyStore, ToolGuard
from toolrag.tools.result import ToolResult
effects = Path(sys.argv[1])
def create_note(text: str, idempotency_key: str = "") -> ToolResult:
    with effects.open("a") as f:
        f.write(text + "\\n")
    time.sleep(0.3)
    return ToolResult.ok({"text": text})
tool = FunctionTool.from_defaults(fn=create_note)
guard = ToolGuard([tool], [ToolCard(name="create_note", side_effect="write")],
                  store=IdempotencyStore(Path(sys.argv[2])))
while time.time() < float(sys.argv[3]):
    time.sleep(0.001)
r = guard.call("create_note", {"text": "one effect", "idempotency_key": "proc-key"})
print("replay" if r.idempotent_replay else "ran", r.success)
"""


def test_two_processes_with_one_key_cause_one_effect(tmp_path: Path) -> None:
    effects, db = tmp_path / "effects.txt", tmp_path / "idem.sqlite"
    start_at = str(time.time() + 4)  # both processes call at the same moment
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PROCESS_SCRIPT, str(effects), str(db), start_at],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [p.communicate(timeout=120) for p in procs]
    outputs = sorted(out.strip() for out, _ in done)
    # a process that printed nothing failed: its error's last lines say why
    assert outputs == ["ran True", "replay True"], (outputs, [err[-1500:] for _, err in done])
    assert effects.read_text().splitlines() == ["one effect"]


def test_a_hanging_tool_times_out_and_its_thread_stops(state: dict[str, Any]) -> None:
    before = {t.ident for t in threading.enumerate()}
    started = time.monotonic()
    result = _guard(state).call("hang_forever", {})
    assert result.error_code == ErrorCode.TIMEOUT and result.recoverable
    assert time.monotonic() - started < 30  # the call came back; it did not hang

    def ours() -> list[threading.Thread]:
        return [
            t for t in threading.enumerate() if t.name == "toolrag-tool" and t.ident not in before
        ]

    deadline = time.monotonic() + 10  # a loaded machine may schedule the stopped thread late
    while ours() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ours()
    assert state["audit"].tail()[0].status == "timeout"


def slow_but_in_time(seconds: float = 0.6) -> ToolResult:
    """A tool that stops itself: it answers after ``seconds``, past its card's 0.3 s."""
    time.sleep(seconds)
    return ToolResult.ok("answered by its own deadline")


def test_a_self_timed_tool_keeps_its_own_deadline(state: dict[str, Any]) -> None:
    card = ToolCard(name="slow", description="Slow.", timeout_s=0.3)
    plain = FunctionTool.from_defaults(fn=slow_but_in_time, name="slow")
    timed = SelfTimedTool.from_defaults(fn=slow_but_in_time, name="slow")
    assert isinstance(timed, SelfTimedTool)
    guarded = ToolGuard([plain], [card], audit=state["audit"]).call("slow", {})
    assert guarded.error_code == ErrorCode.TIMEOUT  # a plain tool gets the card's 0.3 s
    for own in (
        ToolGuard([timed], [card], audit=state["audit"]),
        ToolGuard([plain], [card], audit=state["audit"], inline_tools=["slow"]),
    ):
        result = own.call("slow", {})
        assert result.success and result.data == "answered by its own deadline"


REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")


def whose_request() -> ToolResult:
    """A tool that reads a context variable its caller set (a tracing span, a request id)."""
    return ToolResult.ok(REQUEST_ID.get())


def test_a_tool_under_the_deadline_sees_its_callers_context(state: dict[str, Any]) -> None:
    card = ToolCard(name="whose_request", description="Whose request.", timeout_s=5)
    guard = ToolGuard([_tool(whose_request, "whose_request")], [card], audit=state["audit"])
    token = REQUEST_ID.set("req-42")
    try:
        assert guard.call("whose_request", {}).data == "req-42"  # run in the guard's worker
    finally:
        REQUEST_ID.reset(token)


def test_a_tool_that_raises_and_a_huge_result(state: dict[str, Any]) -> None:
    guard = _guard(state)
    crashed = guard.call("explode", {})
    assert crashed.error_code == ErrorCode.INTERNAL_ERROR and "disk on fire" in str(
        crashed.error_message
    )
    big = guard.call("huge", {})
    assert big.success and big.truncated and len(big.data) == 200_000
    assert "cut" in (big.suggestion or "")
    assert len(big.render()) < 10_000


def test_every_call_is_audited_and_summarised(state: dict[str, Any]) -> None:
    guard = _guard(state)
    for city in ("Oslo", "Bergen", "Oslo"):
        guard.call("get_weather", {"city": city})
    guard.call("nope", {})
    guard.call("explode", {})
    assert state["audit"].count() == 5
    stats = {s.tool: s for s in state["audit"].summary()}
    assert stats["get_weather"].calls == 3 and stats["get_weather"].p95_ms >= 0
    assert stats["explode"].errors == 1 and stats["nope"].refused == 1


def test_audit_arguments_are_redacted(state: dict[str, Any]) -> None:
    card = ToolCard(name="get_weather", sensitive=["city"])
    guard = ToolGuard([_tool(get_weather, "get_weather")], [card], audit=state["audit"])
    guard.call("get_weather", {"city": "Oslo"})
    assert state["audit"].tail()[0].arguments == {"city": "[REDACTED]"}


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("mail jane.doe@example.com today", "jane.doe@example.com"),
        ("call (555) 867-5309 now", "867-5309"),
        ("call +1 555-867-5309 now", "867-5309"),
        ("Authorization: Bearer abcdef0123456789xyz", "abcdef0123456789xyz"),
        ("key sk-proj-ABCDEF0123456789abcdef", "ABCDEF0123456789abcdef"),
        ("github ghp_0123456789abcdefABCDEF0123", "ghp_0123456789"),
        ("https://x.test/?api_key=s3cr3t&q=1", "s3cr3t"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "eyJzdWIiOiIxMjM0In0"),
    ],
)
def test_redaction_patterns(text: str, secret: str) -> None:
    assert secret not in redact_text(text)


def test_redaction_keeps_ordinary_values_and_masks_secret_keys() -> None:
    value = {
        "project": "GRB-101",
        "amount": 1250.5,
        "password": "hunter2",
        "headers": {"Authorization": "Basic Zm9vOmJhcg=="},
        "notes": ["ok", "ping ops@example.org"],
        "ssn_field": "123",
    }
    out = redact(value, sensitive=["ssn_field"])
    assert out["project"] == "GRB-101" and out["amount"] == 1250.5
    assert out["password"] == "[REDACTED]" and out["headers"]["Authorization"] == "[REDACTED]"
    assert out["notes"] == ["ok", "ping [REDACTED-EMAIL]"] and out["ssn_field"] == "[REDACTED]"
    plain = "dates 2026-03-14 and sheet A-101 stay"
    assert redact(plain) == plain


def test_the_terminal_prompt_says_no_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from toolrag.cli.approval import prompt_approval

    request = ApprovalRequest(tool="cancel_inspection", side_effect="delete", arguments={})
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # piped input is not a person
    assert prompt_approval(request) is False

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty("y\n"))
    assert prompt_approval(request) is True
    monkeypatch.setattr("sys.stdin", Tty("\n"))
    assert prompt_approval(request) is False  # the default is no


def _open_store_at(path: str, start_at: float) -> None:
    while time.time() < start_at:
        pass
    IdempotencyStore(Path(path)).close()


def test_processes_opening_a_new_store_together_all_open_it(tmp_path: Path) -> None:
    # SQLite refuses a journal-mode switch at once ("database is locked", no busy wait) while
    # another process switches the same new file: about two rounds in five failed before
    ctx = multiprocessing.get_context("fork")
    for round_ in range(10):
        path, start_at = str(tmp_path / f"idem-{round_}.sqlite"), time.time() + 0.2
        procs = [ctx.Process(target=_open_store_at, args=(path, start_at)) for _ in range(3)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(timeout=60)
        assert [proc.exitcode for proc in procs] == [0, 0, 0], f"round {round_}"
