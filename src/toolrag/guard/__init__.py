"""Guarded tool execution: profiles, approval, idempotent writes, timeouts and the audit log."""

from toolrag.guard.audit import AuditLog, AuditRecord, ToolStats
from toolrag.guard.executor import ToolGuard
from toolrag.guard.idempotency import IdempotencyStore
from toolrag.guard.policy import ApprovalRequest, Approver, approve_all, deny_all
from toolrag.guard.redact import redact, redact_text
from toolrag.profiles import AgentProfile

__all__ = [
    "AgentProfile",
    "ApprovalRequest",
    "Approver",
    "AuditLog",
    "AuditRecord",
    "IdempotencyStore",
    "ToolGuard",
    "ToolStats",
    "approve_all",
    "deny_all",
    "redact",
    "redact_text",
]
