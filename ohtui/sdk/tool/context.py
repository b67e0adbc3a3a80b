"""Which action a tool is running, for tools whose behaviour depends on its approval."""

from __future__ import annotations

from contextvars import ContextVar

running_action_id: ContextVar[str | None] = ContextVar("ohtui_running_action_id", default=None)
"""The id of the ActionEvent whose tool is running on this thread (None outside a run)."""
