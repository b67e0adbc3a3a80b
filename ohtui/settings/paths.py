"""Where ohtui keeps its files (platformdirs), each overridable by an environment variable."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ohtui.small_file import UnusableFileError, read_small

APP_NAME = "ohtui"


def _dir(env: str, kind: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override).expanduser()
    import platformdirs  # small, but only needed here

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))


CONFIG_LIMIT = 1 << 20
"""config.toml is read up to this size (through `ohtui.small_file.read_small`: a FIFO or a
device in its place must not block ohtui's start)."""


def config_text(path: Path) -> str:
    """The text of the config file at `path`; OSError when it cannot be read, is no regular
    file, is larger than CONFIG_LIMIT or is not UTF-8 (UnusableFileError says which)."""
    try:
        return read_small(path, CONFIG_LIMIT).decode("utf-8")
    except UnicodeDecodeError:
        raise UnusableFileError("is not UTF-8 text") from None


def config_file() -> Path:
    """config.toml (OHTUI_CONFIG overrides; so does `ohtui --config PATH`)."""
    override = os.environ.get("OHTUI_CONFIG")
    if override:
        return Path(override).expanduser()
    return _dir("OHTUI_CONFIG_DIR", "config") / "config.toml"


def skills_dir() -> Path:
    """The user's own skills (OHTUI_CONFIG_DIR moves it with the config)."""
    return _dir("OHTUI_CONFIG_DIR", "config") / "skills"


def commands_dir() -> Path:
    """The user's own slash commands, `*.md` prompts (OHTUI_CONFIG_DIR moves it too)."""
    return _dir("OHTUI_CONFIG_DIR", "config") / "commands"


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


def server_session_key_file() -> Path:
    """The session key `ohtui serve` made when none was given (readable by the user only)."""
    return data_dir() / "server-session.key"


def private_paths(config: Path | None = None) -> tuple[str, ...]:
    """ohtui's own files, out of the agent's reach in every sandbox mode: settings (`config`:
    the config.toml in use, if not the usual one), saved conversations, prompt history,
    approval rules, trust, the server's key, logs. Their folders are made if missing: a
    folder that is not there could be made by the agent, with settings in it the next run
    would read."""
    folders = [_dir("OHTUI_CONFIG_DIR", "config"), data_dir(), log_dir()]
    _make(folders)
    files = [config_file(), *([config.expanduser().absolute()] if config else [])]
    return tuple(dict.fromkeys(str(path) for path in [*files, *folders]))


def protected_paths() -> tuple[str, ...]:
    """ohtui's files the agent may read but never change: the user's skills (their scripts
    may be run) and the plugins fetched for it (their hooks run outside the sandbox); made
    if missing, like `private_paths`."""
    import platformdirs

    folders = [skills_dir(), Path(platformdirs.user_cache_dir(APP_NAME)) / "plugins"]
    _make(folders)
    return tuple(str(folder) for folder in folders)


def _make(folders: list[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):  # then it stays as it is, and so does its guard
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)


def plugin_trust_file() -> Path:
    """Which plugins the user trusted (and which version of each)."""
    return data_dir() / "plugin-trust.json"


def model_memory_file() -> Path:
    """The models switched to with /model: the recent ones, and each conversation's."""
    return data_dir() / "models.json"
