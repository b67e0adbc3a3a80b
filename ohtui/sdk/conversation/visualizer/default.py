"""DefaultConversationVisualizer: prints every event as a titled block, with token figures."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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
from ohtui.sdk.llm.metrics import TokenUsage
from ohtui.terminal_text import terminal_safe

if TYPE_CHECKING:  # rich loads when a visualizer is made, not with the engine
    from rich.console import Console, Group
    from rich.rule import Rule
    from rich.text import Text

# (title, colour) per event class; the first isinstance match wins. Messages, actions and
# rejections are titled by who made them (see `_title`).
_STYLES: list[tuple[type[Event], str, str]] = [
    (SystemPromptEvent, "System Prompt", "magenta"),
    (ObservationEvent, "Observation", "yellow"),
    (AgentErrorEvent, "Agent Error", "red"),
    (ConversationErrorEvent, "Conversation Error", "red"),
    (PauseEvent, "User Paused", "bright_yellow"),
    (Condensation, "Condensation", "white"),
    (CondensationRequest, "Condensation Request", "magenta"),
    (CondensationSummaryEvent, "Condensation Summary", "white"),
]
_MESSAGE_COLOURS = {"user": "gold3", "agent": "blue", "environment": "magenta"}
_WITH_METRICS = (MessageEvent, ActionEvent, AgentErrorEvent, Condensation)
"""Events shown with the token figures: those an LLM call produces (and user messages)."""


class DefaultConversationVisualizer(ConversationVisualizerBase):
    """Prints events with Rich: a titled rule, the event, then token and cost figures."""

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
        if console is None:
            from rich.console import Console

            console = Console()
        self._console = console
        self._last_action_response_id: str | None = None

    def on_event(self, event: Event) -> None:
        """Print one event (state updates are not printed).

        On a console whose encoding lacks some characters (a legacy Windows code page),
        those characters are printed as "?" rather than failing.
        """
        block = self._create_event_block(event)
        if block is None:
            return
        try:
            self._console.print(block)
        except UnicodeEncodeError:
            with self._console.capture() as capture:
                self._console.print(block)
            encoding = getattr(self._console.file, "encoding", None) or "ascii"
            rendered = capture.get().encode(encoding, "replace").decode(encoding)
            self._console.file.write(rendered)
            self._console.file.flush()

    def _create_event_block(self, event: Event) -> Group | None:
        """The block printed for `event`: a titled rule, its text, its token figures; None
        for what is not shown (state updates, skipped user messages, empty events)."""
        from rich.console import Group
        from rich.rule import Rule
        from rich.text import Text

        if isinstance(event, ConversationStateUpdateEvent):
            return None
        if self._skip_user_messages and isinstance(event, MessageEvent) and event.source == "user":
            return None
        body = event.visualize.copy()
        if not body.plain.strip():
            return None
        # What the model, a command or a file said, shown and never acted on by the terminal
        # (one stand-in per character: the styles stay where they were).
        body.plain = terminal_safe(body.plain)
        for pattern, style in self._highlight.items():
            body.highlight_regex(pattern, style)
        title, colour = self._event_title(event)
        parts: list[Rule | Text] = [
            Rule(Text(title, style=f"bold {colour}"), style=colour, align="left"),
            Text(),
            body,
        ]
        if isinstance(event, _WITH_METRICS):
            primary = self._claim_batch_primary(event)
            subtitle = self._format_metrics_subtitle(event, force_totals=not primary)
            if subtitle is not None:
                parts += [Text(), Text.from_markup(subtitle, style="dim")]
        parts.append(Text())
        return Group(*parts)

    def _event_title(self, event: Event) -> tuple[str, str]:
        """The title and colour of `event`'s block (a subclass may name the agents)."""
        return _title(event)

    def _claim_batch_primary(self, event: Event | None) -> bool:
        """Whether `event` is the first action of its LLM response (or no action at all).

        Parallel tool calls share one response, so its figures are shown under the first
        only. The calls of one response are recorded together, so remembering the previous
        action's response is enough; call this once per event, in order.
        """
        if not isinstance(event, ActionEvent):
            return True
        primary = event.llm_response_id != self._last_action_response_id
        self._last_action_response_id = event.llm_response_id
        return primary

    def _find_request_usage(self, event: Event | None) -> TokenUsage | None:
        """The usage of the LLM call that produced `event`, found by its response id among
        the calls each LLM keeps (its latest ones; after a resume, only the last saved); None
        for an event no call produced, or whose call is no longer kept."""
        if not isinstance(event, ActionEvent | MessageEvent | Condensation):
            return None
        response_id = event.llm_response_id
        stats = self.conversation_stats
        if not response_id or stats is None:
            return None
        for metrics in stats.usage_to_metrics.values():
            found = metrics.find_token_usage(response_id)
            if found is not None:
                return found
            latest = metrics.latest_token_usage
            if latest is not None and latest.response_id == response_id:
                return latest
        return None

    def _format_metrics_subtitle(
        self, event: Event | None = None, *, force_totals: bool = False
    ) -> str | None:
        """The token and cost line (Rich markup): the figures of the call that produced
        `event` beside the conversation's totals, or the totals alone; None before any
        tokens were used."""
        stats = self.conversation_stats
        if stats is None:
            return None
        combined = stats.get_combined_metrics()
        total = combined.accumulated_token_usage
        if not (total.prompt_tokens or total.completion_tokens):
            return None
        call = None if force_totals else self._find_request_usage(event)

        def figure(label: str, this: str, overall: str) -> str:
            return f"{label} {this} (total {overall})" if call else f"{label} (total {overall})"

        parts = [
            "[cyan]"
            + figure(
                "↑ input", _abbr(call.prompt_tokens if call else 0), _abbr(total.prompt_tokens)
            )
            + "[/cyan]",
            "[magenta]"
            + figure(
                "cache hit",
                _rate(call.cache_hit_rate if call else None),
                _rate(combined.cache_hit_rate),
            )
            + "[/magenta]",
        ]
        if total.reasoning_tokens or (call and call.reasoning_tokens):
            reasoning = _abbr(call.reasoning_tokens if call else 0)
            parts.append(
                f"[yellow]{figure('reasoning', reasoning, _abbr(total.reasoning_tokens))}[/yellow]"
            )
        output = _abbr(call.completion_tokens if call else 0)
        parts.append(f"[blue]{figure('↓ output', output, _abbr(total.completion_tokens))}[/blue]")
        # Costs are kept as a total only: no call's own cost can be shown.
        cost = combined.accumulated_cost
        parts.append(f"[green]$ (total {f'{cost:.4f}' if cost > 0 else '0.00'})[/green]")
        return "Tokens: " + " • ".join(parts)


def _title(event: Event) -> tuple[str, str]:
    if isinstance(event, MessageEvent):
        return f"Message from {event.source.capitalize()}", _MESSAGE_COLOURS[event.source]
    if isinstance(event, ActionEvent):
        return ("Agent Action" if event.action is not None else "Agent Action (Not Executed)"), (
            "blue"
        )
    if isinstance(event, UserRejectObservation):
        return f"{event.rejection_source.capitalize()} Rejected Action", "red"
    return next(
        ((title, colour) for cls, title, colour in _STYLES if isinstance(event, cls)),
        (type(event).__name__, "white"),
    )


def _abbr(count: int) -> str:
    """1234 as "1.23K", 2000000 as "2M": two decimals at most, none that are zeros."""
    for size, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K")):
        if count >= size:
            return f"{count / size:.2f}".rstrip("0").rstrip(".") + suffix
    return str(count)


def _rate(rate: float | None) -> str:
    return f"{rate * 100:.2f}%" if rate is not None else "N/A"
