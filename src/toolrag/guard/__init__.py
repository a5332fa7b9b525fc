"""Guarded tool execution: profiles, approval, idempotent writes, timeouts and the audit log."""

from toolrag.guard.audit import AuditLog, AuditRecord, ToolStats
from toolrag.guard.executor import MAX_ARGUMENT_CHARS, ToolGuard
from toolrag.guard.function_tools import ApprovalRequired, RunState, guarded_tools
from toolrag.guard.idempotency import IdempotencyStore
from toolrag.guard.policy import ApprovalRequest, Approver, approve_all, deny_all
from toolrag.guard.redact import redact, redact_text
from toolrag.profiles import AgentProfile

__all__ = [
    "MAX_ARGUMENT_CHARS",
    "AgentProfile",
    "ApprovalRequest",
    "ApprovalRequired",
    "Approver",
    "AuditLog",
    "AuditRecord",
    "IdempotencyStore",
    "RunState",
    "ToolGuard",
    "ToolStats",
    "approve_all",
    "deny_all",
    "guarded_tools",
    "redact",
    "redact_text",
]
