"""Where ohtui keeps its files (platformdirs), each overridable by an environment variable."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "ohtui"


def _dir(env: str, kind: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override).expanduser()
    import platformdirs  # small, but only needed here

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))


def config_file() -> Path:
    """config.toml (OHTUI_CONFIG overrides; so does `ohtui --config PATH`)."""
    override = os.environ.get("OHTUI_CONFIG")
    if override:
        return Path(override).expanduser()
    return _dir("OHTUI_CONFIG_DIR", "config") / "config.toml"


def skills_dir() -> Path:
    """The user's own skills (OHTUI_CONFIG_DIR moves it with the config)."""
    return _dir("OHTUI_CONFIG_DIR", "config") / "skills"


def data_dir() -> Path:
    """Conversations and prompt history (OHTUI_DATA_DIR overrides)."""
    return _dir("OHTUI_DATA_DIR", "data")


def log_dir() -> Path:
    """Log files (OHTUI_LOG_DIR overrides)."""
    return _dir("OHTUI_LOG_DIR", "log")


def conversations_dir() -> Path:
    """The persistence base directory of saved conversations."""
    return data_dir() / "conversations"


def history_file() -> Path:
    """The prompt history, kept across sessions."""
    return data_dir() / "prompt-history.jsonl"


def approval_rules_file() -> Path:
    """Approval rules that outlive a conversation (scopes user and workspace)."""
    return data_dir() / "approval-rules.json"


def mcp_trust_file() -> Path:
    """Which workspaces' .mcp.json the user trusted (and which content of it)."""
    return data_dir() / "mcp-trust.json"


def plugin_trust_file() -> Path:
    """Which plugins the user trusted (and which version of each)."""
    return data_dir() / "plugin-trust.json"
