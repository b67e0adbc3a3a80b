"""The MCP servers of a session's conversation: started once the first frame has been idle,
watched (the screen is told of changes, the user of each new failure), turned on or off."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.tui import messages as msg

if TYPE_CHECKING:
    from ohtui.sdk.mcp import MCPClientManager, ServerInfo
    from ohtui.tui.session.link import Link


class McpServers:
    """One conversation's MCP servers, as the UI sees and switches them."""

    def __init__(self, link: Link, frame_idle: bool = False) -> None:
        """`frame_idle`: the app's first frame has been idle already."""
        self._link = link
        self._frame_idle = frame_idle
        """The app's first frame has been idle: the servers may start."""
        self._reported: set[tuple[str, str]] = set()

    def frame_idle(self) -> None:
        """The app's first frame has been idle: start the servers (now, or as soon as the
        conversation is open), so their start-up never slows that frame."""
        self._frame_idle = True
        self.start()

    def start(self) -> None:
        """(Either thread; starting is idempotent.) Start the servers once both the frame
        has been idle and the conversation is open."""
        from ohtui.sdk import LocalConversation

        conversation = self._link.conversation
        if self._frame_idle and isinstance(conversation, LocalConversation):
            conversation.start_mcp()

    def _manager(self) -> MCPClientManager | None:
        from ohtui.sdk import LocalConversation

        conversation = self._link.conversation
        if isinstance(conversation, LocalConversation):
            return conversation.agent.mcp
        return None

    def servers(self) -> list[ServerInfo]:
        """The MCP servers of the conversation, with their status and tools."""
        manager = self._manager()
        return manager.servers() if manager is not None else []

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn an MCP server on or off for this session; the agent's next step sees it."""
        manager = self._manager()
        if manager is not None:
            manager.set_enabled(name, enabled)

    def watch(self) -> None:
        """Tell the screen of the servers' changes from now on (the conversation is open)."""
        manager = self._manager()
        if manager is not None:
            manager.add_listener(self._changed)
            self._changed()

    def _changed(self) -> None:
        """(The MCP loop thread.) Tell the screen; warn once about each new failure."""
        self._link.post(msg.McpChanged())
        for server in self.servers():
            if server.error is None or (server.name, server.error) in self._reported:
                continue
            self._reported.add((server.name, server.error))
            lines = server.error.splitlines()
            why = "\n".join([lines[0], *lines[1:][-2:]])  # the reason, and stderr's last lines
            self._link.post(msg.Notice(f"MCP server '{server.name}' failed: {why}", "warning"))
