"""DefaultConversationVisualizer: prints every event as a Rich panel."""

from __future__ import annotations

import re

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.condenser import Condensation, CondensationRequest, CondensationSummaryEvent
from ohtui.sdk.event.conversation_error import ConversationErrorEvent
from ohtui.sdk.event.conversation_state import ConversationStateUpdateEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import (
    AgentErrorEvent,
    ObservationEvent,
    UserRejectObservation,
)
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent
from ohtui.sdk.event.user_action import PauseEvent

# (title, border colour) per event class; the first isinstance match wins.
_STYLES: list[tuple[type[Event], str, str]] = [
    (SystemPromptEvent, "System prompt", "magenta"),
    (ActionEvent, "Agent action", "blue"),
    (ObservationEvent, "Observation", "cyan"),
    (UserRejectObservation, "Rejected", "yellow"),
    (AgentErrorEvent, "Agent error", "red"),
    (ConversationErrorEvent, "Conversation error", "red"),
    (PauseEvent, "Paused", "yellow"),
    (Condensation, "Condensation", "bright_black"),
    (CondensationRequest, "Condensation request", "bright_black"),
    (CondensationSummaryEvent, "Summary", "bright_black"),
]


class DefaultConversationVisualizer(ConversationVisualizerBase):
    """Prints events with Rich: a titled panel per event, errors in red."""

    def __init__(
        self,
        highlight_regex: dict[str, str] | None = None,
        skip_user_messages: bool = False,
        console: Console | None = None,
    ) -> None:
        super().__init__()
        self._highlight = {
            re.compile(p, re.MULTILINE): s for p, s in (highlight_regex or {}).items()
        }
        self._skip_user_messages = skip_user_messages
        self._console = console or Console()

    def on_event(self, event: Event) -> None:
        """Print one event (state updates are not printed).

        On a console whose encoding lacks some characters (a legacy Windows code page),
        those characters are printed as "?" rather than failing.
        """
        panel = self._panel(event)
        if panel is None:
            return
        try:
            self._console.print(panel, "")
        except UnicodeEncodeError:
            with self._console.capture() as capture:
                self._console.print(panel, "")
            encoding = getattr(self._console.file, "encoding", None) or "ascii"
            rendered = capture.get().encode(encoding, "replace").decode(encoding)
            self._console.file.write(rendered)
            self._console.file.flush()

    def _panel(self, event: Event) -> Panel | None:
        if isinstance(event, ConversationStateUpdateEvent):
            return None
        if isinstance(event, MessageEvent):
            if event.source == "user" and self._skip_user_messages:
                return None
            title, colour = (
                ("User message", "gold3") if event.source == "user" else ("Agent message", "blue")
            )
        else:
            title, colour = next(
                ((t, c) for cls, t, c in _STYLES if isinstance(event, cls)),
                (type(event).__name__, "white"),
            )
        body = event.visualize.copy()
        for pattern, style in self._highlight.items():
            body.highlight_regex(pattern, style)
        subtitle = self._metrics_line() if isinstance(event, MessageEvent | ActionEvent) else None
        if isinstance(event, MessageEvent) and event.source == "user":
            subtitle = None
        return Panel(
            body,
            title=Text(title, style=f"bold {colour}"),
            title_align="left",
            border_style=colour,
            subtitle=subtitle,
            subtitle_align="right",
            expand=True,
        )

    def _metrics_line(self) -> Text | None:
        stats = self.conversation_stats
        if stats is None or not stats.usage_to_metrics:
            return None
        metrics = stats.get_combined_metrics()
        usage = metrics.accumulated_token_usage
        line = f"tokens ↑ {_abbr(usage.prompt_tokens)} ↓ {_abbr(usage.completion_tokens)}"
        if usage.cache_read_tokens:
            line += f" cache {_abbr(usage.cache_read_tokens)}"
        if usage.reasoning_tokens:
            line += f" reasoning {_abbr(usage.reasoning_tokens)}"
        line += f"  ${metrics.accumulated_cost:.4f}"
        return Text(line, style="dim")


def _abbr(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.2f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}K"
    return str(count)
