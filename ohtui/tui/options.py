"""AppOptions: what the app is started with (from the command line and the environment)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.settings.overrides import Key, Override, run_overrides

if TYPE_CHECKING:
    from ohtui.opening import Callbacks
    from ohtui.sdk import BaseConversation

ConversationFactory = Callable[["Callbacks"], "BaseConversation"]
"""Opens a conversation that calls back through the given callbacks."""


@dataclass
class AppOptions:
    """Everything the app needs to start; plain data, cheap to import."""

    workspace: Path
    history_file: Path
    persistence_dir: Path | None = None
    """Where conversations are saved; None: as the settings say ([storage])."""
    config_file: Path | None = None
    """config.toml; None: no file (every default; settings are not saved)."""
    use_keyring: bool = False
    """Keep secrets in the OS keyring (the real app); False: in memory (tests)."""
    environ: Mapping[str, str] = field(default_factory=dict)
    """Environment variables that override settings (the real app: os.environ)."""
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    """An API key that wins over the environment and the keyring (tests)."""
    policy: ConfirmationPolicy | None = None
    """--confirm: the confirmation policy for this run (None: as the settings say)."""
    sandbox: str | None = None
    """--sandbox: the sandbox mode for this run (None: as the settings say)."""
    server: str | None = None
    """--server: the agent server to run on (None: as the settings say)."""
    resume_id: str | None = None
    pick: bool = False
    """Open the conversation picker first (`ohtui --resume` without an id)."""
    continue_latest: bool = False
    """Resume this workspace's latest conversation (`ohtui --continue`)."""
    stream: bool = True
    clock: Callable[[], float] = field(default=time.monotonic)
    """The clock for elapsed times; tests pass a frozen one for stable snapshots."""
    conversation_id: str | None = None
    """A fixed id for a new conversation (tests); None picks a random one."""
    rules_file: Path | None = None
    """Where approval rules of scope workspace are kept (None: not kept)."""
    mcp_trust_file: Path | None = None
    """Which workspaces' .mcp.json the user trusted (None: trust lasts for the process)."""
    plugin_trust_file: Path | None = None
    """Which plugin versions the user trusted (None: trust lasts for the process)."""
    conversation_factory: ConversationFactory | None = None
    """Opens the conversation instead of the local one the settings describe (any
    BaseConversation: e.g. a remote one, or a test's own)."""
    leaf_event_id: str | None = None
    """Move the resumed conversation's HEAD to this event as it opens (a branch chosen in
    the picker); None: as it was saved."""
    model_memory_file: Path | None = None
    """The models switched to with /model, recent and per conversation (None: kept for
    the process)."""
    screen_reader: bool = False
    """--screen-reader: plain text for screen readers (False: as the environment and the
    settings say)."""
    commands_dir: Path | None = None
    """The user's custom slash commands (`*.md`); None: none (tests)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "policy" and isinstance(value, str):  # the command line gives plain text
            value = ConfirmationPolicy(value)
        super().__setattr__(name, value)

    def overrides(self) -> dict[Key, Override]:
        """Settings this run overrides: environment variables, then flags."""
        return run_overrides(
            self.environ,
            model=self.model,
            base_url=self.base_url,
            policy=self.policy,
            sandbox=self.sandbox,
            server=self.server,
            screen_reader=self.screen_reader,
        )
