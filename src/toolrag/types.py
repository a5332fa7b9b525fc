"""The small vocabularies every layer shares: content types and side-effect classes."""

from __future__ import annotations

from typing import Literal

ContentType = Literal["documents", "blueprints", "schedules"]
"""The sample's content types, each with its loader and LanceDB table."""

SideEffect = Literal["read", "write", "delete", "external"]
"""What a tool call may cause: ``read`` runs freely, ``write`` needs an idempotency key,
``delete`` and ``external`` wait for a person's approval."""
