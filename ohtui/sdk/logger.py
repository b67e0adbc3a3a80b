"""get_logger, as the SDK names it: engine modules log through the standard `logging`
module, and where the records go is the application's choice (ohtui: a file)."""

from __future__ import annotations

import logging


def get_logger(name: str) -> logging.Logger:
    """The standard library's logger called `name`."""
    return logging.getLogger(name)
