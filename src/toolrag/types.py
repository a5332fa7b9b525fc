"""The small vocabularies every layer shares: side-effect classes."""

from __future__ import annotations

from typing import Literal

SideEffect = Literal["read", "write", "delete", "external"]
"""What a tool call may cause: ``read`` runs freely, ``write`` needs an idempotency key,
``delete`` and ``external`` wait for a person's approval."""
