"""get_logger and setup_logging, as the SDK names them.

Engine modules log through the standard `logging` module and never configure it: where the
records go is the application's choice (ohtui: a file, so nothing reaches the terminal while
the TUI runs). A script may call `setup_logging` to send them to stderr and, if it asks, to a
file, as the SDK's does; unlike the SDK, importing this module configures nothing.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

LOG_FILE_NAME = "app.log"
"""The file `setup_logging` writes in its log directory."""
PLAIN_FORMAT = "%(asctime)s - %(levelname)s - %(name)s - %(filename)s:%(lineno)d - %(message)s"
_TRUE = {"1", "true", "yes"}


def get_logger(name: str) -> logging.Logger:
    """The standard library's logger called `name`."""
    return logging.getLogger(name)


def _env_flag(name: str, default: str = "false") -> bool:
    return os.environ.get(name, default).strip().lower() in _TRUE


def _env_level() -> int:
    if _env_flag("DEBUG"):
        return logging.DEBUG
    name = os.environ.get("LOG_LEVEL", "INFO").strip().upper()
    level = logging.getLevelNamesMapping().get(name)
    return logging.INFO if level is None else level


class JsonFormatter(logging.Formatter):
    """One JSON object per record (time, level, logger, file, line, message)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line; an exception's traceback under `exc_info`."""
        data: dict[str, Any] = {
            "asctime": self.formatTime(record),
            "levelname": record.levelname,
            "name": record.name,
            "filename": record.filename,
            "lineno": record.lineno,
            "message": record.getMessage(),
        }
        if record.exc_info:
            data["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


def setup_logging(
    level: int | None = None,
    log_to_file: bool | None = None,
    log_dir: str | None = None,
    fmt: str | None = None,
    when: str | None = None,
    backup_count: int | None = None,
) -> None:
    """Configure the root logger for a script: stderr, and `<log_dir>/app.log` if asked.

    An argument left None is read from the environment as the SDK's does: LOG_LEVEL (or
    DEBUG), LOG_TO_FILE, LOG_DIR (default `logs`), LOG_ROTATE_WHEN, LOG_BACKUP_COUNT;
    LOG_JSON writes JSON lines. Handlers already installed are kept, and no second stream
    handler is added. Applications that own the terminal (ohtui's TUI) never call it.
    """
    import logging.handlers

    lvl = _env_level() if level is None else level
    to_file = _env_flag("LOG_TO_FILE") if log_to_file is None else log_to_file
    directory = os.environ.get("LOG_DIR", "logs") if log_dir is None else log_dir
    rotate_when = os.environ.get("LOG_ROTATE_WHEN", "midnight") if when is None else when
    keep = _backup_count() if backup_count is None else backup_count
    as_json = _env_flag("LOG_JSON")

    root = logging.getLogger()
    root.setLevel(lvl)
    if not any(isinstance(h, logging.StreamHandler) for h in root.handlers):
        console = logging.StreamHandler()  # stderr
        console.setLevel(lvl)
        console.setFormatter(JsonFormatter() if as_json else logging.Formatter(fmt or PLAIN_FORMAT))
        root.addHandler(console)
    if to_file:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise ValueError(
                f"setup_logging: cannot create the log directory {directory!r} "
                f"({exc.strerror or exc}); give log_dir a writable directory"
            ) from exc
        handler = logging.handlers.TimedRotatingFileHandler(
            os.path.join(directory, LOG_FILE_NAME),
            when=rotate_when,
            backupCount=keep,
            encoding="utf-8",
        )
        handler.setLevel(lvl)
        handler.setFormatter(JsonFormatter() if as_json else logging.Formatter(fmt or PLAIN_FORMAT))
        root.addHandler(handler)


def _backup_count() -> int:
    raw = os.environ.get("LOG_BACKUP_COUNT", "7")
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"LOG_BACKUP_COUNT must be a whole number, not {raw!r}") from None
