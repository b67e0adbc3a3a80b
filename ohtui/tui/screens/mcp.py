"""/mcp: the MCP servers, their status (starting, ready with N tools, failed and why) and
tools; turn a server on or off for this session."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ohtui.sdk.mcp.manager import ServerInfo, ServerStatus
from ohtui.tui.screens.fit import fit_to_screen, fits

EMPTY_TEXT = (
    "No MCP servers are configured. Add [mcp.servers.NAME] to config.toml, or a .mcp.json "
    "to the workspace (see the README, “MCP servers”)."
)
FIT_TRIES = 3
"""Layouts the list is fitted again after, until the dialog is on screen."""
ERROR_LINES = 6
"""Lines of a failed server's error (and stderr tail) shown."""
_MARKS = {
    ServerStatus.STARTING: ("◌", "$text-warning"),
    ServerStatus.READY: ("●", "$text-success"),
    ServerStatus.FAILED: ("✗", "$text-error"),
    ServerStatus.DISABLED: ("○", "$foreground-muted"),
}


def server_prompt(server: ServerInfo) -> Content:
    """`● name  ready, 2 tools  uvx mcp-server-time`, and the sandbox it runs in."""
    mark, style = _MARKS[server.status]
    target = server.spec.short_target if server.spec is not None else ""
    status = server.summary if server.status is not ServerStatus.FAILED else "failed"
    return Content.assemble(
        (f"{mark} ", style),
        (server.name, "bold"),
        "  ",
        (status, style),
        (f"  {target}", "$foreground-muted") if target else "",
        (f"  (sandbox: {server.confined})", "$foreground-muted") if server.confined else "",
    )


def detail_rows(server: ServerInfo) -> list[Content]:
    """What follows a server: its error lines, or its tools (read-only ones marked)."""
    if server.status is ServerStatus.FAILED:
        lines = (server.error or "unknown error").splitlines()[:ERROR_LINES]
        return [Content.styled(f"    {line}", "$text-error") for line in lines]
    rows = []
    for tool in server.tools:
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        rows.append(
            Content.assemble(
                "    ",
                (tool.name, "$text-accent"),
                (" (read-only)" if tool.read_only else "", "$foreground-muted"),
                (f"  {first}" if first else "", "$foreground-muted"),
            )
        )
    return rows


class MCPScreen(ModalScreen[None]):
    """The MCP servers and their tools; space or enter turns the highlighted one on or off."""

    CSS_PATH = "mcp.tcss"
    BINDINGS = [
        Binding("space,enter", "switch", "On/off", priority=True),
        Binding("escape,q", "close", "Close"),
    ]

    def __init__(self, servers: Sequence[ServerInfo], toggle: Callable[[str, bool], None]) -> None:
        """`toggle(name, enabled)` turns a server on or off for the session."""
        super().__init__()
        self._servers = list(servers)
        self._toggle = toggle
        self._filled = False
        """The list has been filled once: `show` before that only keeps the servers."""

    def compose(self) -> ComposeResult:
        """The servers with their tools (or the empty state) and a key legend."""
        with Vertical(id="dialog"):
            yield Static("MCP servers", id="heading")
            yield Static(EMPTY_TEXT, id="empty", markup=False)
            yield OptionList(id="servers")
            yield Static(
                "space/enter turn on or off (this session) · esc close", id="legend", markup=False
            )

    def on_mount(self) -> None:
        """Fill the list (with the servers as they are by now)."""
        self._filled = True
        self.show(self._servers)

    def on_resize(self) -> None:
        """Fit again to the new size."""
        self.call_after_refresh(self._fit)

    def _fit(self, tries: int = FIT_TRIES) -> None:
        """Let the list take the rows the heading and legend leave (it scrolls beyond them):
        the legend stays on screen however small the terminal."""
        fit_to_screen(self.query_one("#dialog"), self.query_one("#servers"), self.size.height)
        if tries > 0:
            self.call_after_refresh(self._refit, tries - 1)

    def _refit(self, tries: int) -> None:
        if not fits(self.query_one("#legend"), self.size.height):
            self._fit(tries)

    def show(self, servers: Sequence[ServerInfo]) -> None:
        """Show these servers (kept on the same server as before). A change may arrive
        between the push of this screen and its mount: it is kept, and shown on mount."""
        self._servers = list(servers)
        if not self._filled:
            return
        option_list = self.query_one("#servers", OptionList)
        current = self._highlighted()
        option_list.clear_options()
        for server in self._servers:
            option_list.add_option(Option(server_prompt(server), id=server.name))
            for row in detail_rows(server):
                option_list.add_option(Option(row, disabled=True))
        self.query_one("#empty").display = not self._servers
        option_list.display = bool(self._servers)
        names = [s.name for s in self._servers]
        if names:
            target = current if current in names else names[0]
            option_list.highlighted = option_list.get_option_index(target)
        self.call_after_refresh(self._fit)

    def _highlighted(self) -> str | None:
        option = self.query_one("#servers", OptionList).highlighted_option
        return option.id if option is not None else None

    def action_switch(self) -> None:
        """Turn the highlighted server off if it is on (starting, ready), else on."""
        name = self._highlighted()
        server = next((s for s in self._servers if s.name == name), None)
        if server is None or server.spec is None:
            if server is not None:
                self.notify("Fix this server's settings first.", severity="warning")
            return
        on = server.status in (ServerStatus.DISABLED, ServerStatus.FAILED)
        self._toggle(server.name, on)
        self.notify(f"MCP server '{server.name}' {'starting' if on else 'off'} for this session.")

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)
