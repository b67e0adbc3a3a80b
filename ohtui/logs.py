"""Logging to a file under the user log directory: the terminal belongs to the front end."""

from __future__ import annotations

import logging
import logging.handlers
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk import LocalConversation, RemoteConversation

LOG_FILE = "ohtui.log"


def log_to_file() -> logging.Handler:
    """Send the root logger's records (INFO and up) to ohtui.log; idempotent."""
    from ohtui.settings import paths

    root = logging.getLogger()
    for existing in root.handlers:
        if getattr(existing, "_ohtui", False):
            return existing
    try:
        directory = paths.log_dir()
        directory.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            directory / LOG_FILE, maxBytes=2_000_000, backupCount=2, encoding="utf-8"
        )
    except OSError:
        handler = logging.NullHandler()
    handler._ohtui = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    return handler


_masking: logging.Filter | None = None


def mask_in_logs(conversation: LocalConversation | RemoteConversation) -> None:
    """From now on, mask this conversation's secrets, its LLM API key among them, in every log
    record (instead of the conversation's masked before)."""
    global _masking
    from ohtui.sdk.conversation.secret_registry import SecretMaskingFilter

    masking = SecretMaskingFilter(conversation.state.secret_registry)
    for handler in logging.getLogger().handlers:
        if _masking is not None:
            handler.removeFilter(_masking)
        handler.addFilter(masking)
    _masking = masking
