"""What the screens may ask of the app: the session, and going from one screen to another.

The app sits above the screens (it imports them); it hands itself to the chat screen as a
`Navigator`, so the screen reaches it typed without importing it (`textual.getters.app`
would need the app's class, an import upwards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ohtui.tui.checkpoint_types import CheckpointRow, RestorePreview
    from ohtui.tui.rewind_types import TurnRow
    from ohtui.tui.session import Session


class Navigator(Protocol):
    """The app as its screens see it."""

    @property
    def session(self) -> Session:
        """The open conversation's session (created, with the engine's bridge, on first use)."""
        ...

    @property
    def current_session(self) -> Session | None:
        """The session if one has been created (None: none yet)."""
        ...

    def with_profile(self, then: Callable[[], None]) -> None:
        """Run `then` on the UI thread once the settings are loaded (loading off it)."""
        ...

    def profile_loaded(self, then: Callable[[], None] | None = None) -> None:
        """The settings are loaded: apply them, say once what is wrong, then run `then`."""
        ...

    def open_picker(self) -> None:
        """Choose a saved conversation to resume."""
        ...

    def resume_by_id(self, id_prefix: str) -> None:
        """Go to the saved conversation whose id starts with `id_prefix`."""
        ...

    def new_conversation(self) -> None:
        """Leave this conversation (it stays saved) and start a new one."""
        ...

    def open_settings(self, *, first_run: bool = False) -> None:
        """Open the settings screen."""
        ...

    def open_help(self) -> None:
        """Show the keys and commands."""
        ...

    def open_rules(self) -> None:
        """List the approval rules; remove the ones the user marks."""
        ...

    def open_mcp(self) -> None:
        """Show the MCP servers."""
        ...

    def mcp_changed(self) -> None:
        """Keep an open MCP screen current."""
        ...

    def choose_policy(self) -> None:
        """Let the user pick the confirmation policy."""
        ...

    def choose_sandbox(self, mode: str = "") -> None:
        """Confine commands as `mode` says, or let the user pick how ("")."""
        ...

    def show_checkpoints(self, checkpoints: list[CheckpointRow]) -> None:
        """Show the checkpoints; the one chosen is previewed before it is restored."""
        ...

    def confirm_restore(self, preview: RestorePreview) -> None:
        """Show what a restore changes; restore on the user's word."""
        ...

    def show_rewind(self, turns: list[TurnRow]) -> None:
        """List the user's messages to go back to; rewind or fork at the one chosen."""
        ...

    def open_fork(self, conversation_id: str, title: str, restored: int = 0) -> None:
        """Leave this conversation (it stays saved) for its fork just made."""
        ...

    def choose_model(self) -> None:
        """Let the user pick the model the conversation thinks with from its next turn."""
        ...

    def show_cost(self) -> None:
        """Show the conversation's tokens, cache use and cost per model, and its context."""
        ...

    def quit_now(self) -> None:
        """Stop the agent (bounded wait), remember the resume hint, and exit."""
        ...

    def open_diff(self, argument: str = "") -> None:
        """Show what changed in the workspace: "" since the conversation began, a message's
        number, or "pick" to choose the message first."""
        ...

    def give_way(self) -> None:
        """On a background thread, between pieces of its work: wait while a key typed a
        moment ago is being drawn (see `ohtui.tui.app.input_pace`)."""
        ...
