"""StatusBar: run status, title, model, workspace, context use, cost, sandbox (or the agent
server) and policy."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.screen_reader import reading_aloud
from ohtui.tui.status import RunStatus

TITLE_WIDTH = 32
"""Characters of the conversation's title the status bar shows at most."""
NEAR_TRIGGER = 0.8
"""The context meter turns amber at this share of the strategy's trigger (e.g. 80 % of a
0.7 threshold: 56 % of the window; with no threshold, 80 % of the window)."""
POLICY_STYLES = {
    ConfirmationPolicy.ALWAYS: "$text-success",
    ConfirmationPolicy.RISKY: "$text-warning",
    ConfirmationPolicy.NEVER: "$text-error",
}


class StatusBar(Widget):
    """One line of facts about the conversation; the run time ticks while it runs."""

    title: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    workspace: reactive[str] = reactive("")
    status: reactive[RunStatus] = reactive(RunStatus.OPENING)
    policy: reactive[ConfirmationPolicy] = reactive(ConfirmationPolicy.RISKY)
    sandbox: reactive[str] = reactive("")
    """How commands are confined (SandboxConfig.describe(), "off", or "unknown")."""
    server: reactive[str] = reactive("")
    """host:port of the agent server the agent runs on ("": on this machine)."""
    link: reactive[str] = reactive("")
    """The server link's trouble ("reconnecting…", "disconnected"); "" while connected."""
    cost: reactive[float] = reactive(0.0)
    context_used: reactive[int] = reactive(0)
    context_window: reactive[int | None] = reactive(None)
    context_trigger: reactive[float] = reactive(1.0)
    """The share of the window at which the context strategy acts (1.0: when full)."""
    condensing: reactive[bool] = reactive(False)
    """A condensation the user asked for (/condense) is being written."""
    queued: reactive[int] = reactive(0)
    activity: reactive[str] = reactive("")
    """What the run's LLM call is doing ("connecting…", "retrying 2/5"), or why it failed."""
    activity_until: reactive[float | None] = reactive(None)
    """time.monotonic() the activity counts down to (a retry's start)."""
    activity_reason: reactive[str] = reactive("")

    def __init__(self, clock: Callable[[], float], id: str | None = None) -> None:
        super().__init__(id=id)
        self._clock = clock
        self._run_started: float | None = None
        self._ticker: Timer | None = None
        self._spoken = ""

    def show_activity(self, text: str, until: float | None = None, reason: str = "") -> None:
        """Say what the LLM call is doing (cleared when the status changes)."""
        self.activity, self.activity_until, self.activity_reason = text, until, reason

    def watch_status(self, old: RunStatus, new: RunStatus) -> None:
        if new != old:
            self.show_activity("")
        if new is RunStatus.RUNNING and old is not RunStatus.RUNNING:
            self._run_started = self._clock()
            # In screen-reader mode the line changes only when a fact does: no ticking.
            if self._ticker is None and not reading_aloud(self):
                self._ticker = self.set_interval(1.0, self.refresh)
        elif new is not RunStatus.RUNNING and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def spoken(self) -> str:
        """Every fact in words, for screen-reader mode: "status: ready, model …" (what
        colour, glyphs and a narrow width leave unsaid or cut elsewhere)."""
        facts = [f"status: {self.status.label}"]
        activity = self._activity_text(countdown=False)  # a countdown would tick
        if activity:
            facts.append(activity)
        if self.queued:
            facts.append(f"{self.queued} queued")
        if self.condensing:
            facts.append("condensing")
        if self.title:
            facts.append(f"title {' '.join(self.title.split())}")
        facts.append(f"model {self.model or 'none'}")
        if self.workspace:
            facts.append(f"folder {_short_path(self.workspace)}")
        if self.context_used:
            window = f" of {_tokens(self.context_window)}" if self.context_window else ""
            near = ", near the limit" if self.context_near_trigger else ""
            facts.append(f"context {_tokens(self.context_used)}{window} tokens{near}")
        facts.append(f"cost ${self.cost:.2f}")
        if self.server:
            facts.append(f"server {self.server} {self.link}".rstrip())
        if self.sandbox:
            facts.append(_sandbox_badge(self.sandbox).plain.replace(" +net", " with network"))
        facts.append(f"approvals: {self.policy.label}")
        return ", ".join(facts)

    def render(self) -> Content:
        if reading_aloud(self):
            spoken = self.spoken()
            if spoken != self._spoken:  # it wraps: more or fewer rows than the last one
                self._spoken = spoken
                self.call_after_refresh(self.refresh, layout=True)
            return Content(spoken)
        label, style = self.status.label, self.status.style
        if self.status is RunStatus.RUNNING and self._run_started is not None:
            label = f"{label} {_duration(self._clock() - self._run_started)}"
        activity = self._activity_text()
        if activity:
            label = f"{label} · {activity}"
        policy = Content.styled(f" {self.policy.label} ", f"{POLICY_STYLES[self.policy]} reverse")
        # (priority, piece): on a narrow terminal the least useful pieces go first.
        pieces: list[tuple[int, Content]] = [(0, Content.styled(f"● {label}", style))]
        if self.queued:
            pieces.append((0, Content.styled(f"{self.queued} queued", "$text-accent")))
        if self.title:
            pieces.append((3, Content.styled(_clip(self.title, TITLE_WIDTH), "italic")))
        pieces.append((2, Content.styled(self.model or "no model", "bold")))
        if self.workspace:
            pieces.append((5, Content.styled(_short_path(self.workspace), "dim")))
        if self.condensing:
            pieces.append((0, Content.styled("⋯ condensing…", "bold $text-accent")))
        if self.context_used:
            window = f"/{_tokens(self.context_window)}" if self.context_window else ""
            text = f"ctx {_tokens(self.context_used)}{window}"
            if self.context_near_trigger:  # worth keeping on a narrow terminal
                pieces.append((1, Content.styled(text, "bold $text-warning")))
            else:
                pieces.append((4, Content.styled(text, "dim")))
        pieces.append((1, Content.styled(f"${self.cost:.2f}", "dim")))
        if self.server:
            pieces.append((0, _server_badge(self.server, self.link)))
        if self.sandbox:  # beside a server's badge, it gives way before the policy
            pieces.append((1 if self.server else 0, _sandbox_badge(self.sandbox)))
        pieces.append((0, policy))
        width = self.size.width or 1000
        while len(pieces) > 1 and _width(pieces) > width:
            drop = max(range(len(pieces)), key=lambda i: pieces[i][0])
            if pieces[drop][0] == 0:
                break
            pieces.pop(drop)
        if activity and _width(pieces) > width:  # the activity's words give way first
            pieces[0] = (0, self._fitted(pieces, width, style))
        return Content("  ").join(piece for _, piece in pieces)

    @property
    def context_near_trigger(self) -> bool:
        """Whether the context is at or above NEAR_TRIGGER of the strategy's trigger (never
        with an unknown window)."""
        if not self.context_window or not self.context_used:
            return False
        fraction = self.context_used / self.context_window
        return fraction >= NEAR_TRIGGER * self.context_trigger

    def _fitted(self, pieces: list[tuple[int, Content]], width: int, style: str) -> Content:
        """The status piece made to fit: without the reason, then cut short."""
        status = pieces[0][1].plain
        room = len(status) - (_width(pieces) - width)
        reason = f": {self.activity_reason}" if self.activity_reason else ""
        if reason and status.endswith(reason) and len(status) - len(reason) <= room:
            return Content.styled(status[: len(status) - len(reason)], style)
        return Content.styled(f"{status[: max(3, room - 1)]}…", style)

    def _activity_text(self, countdown: bool = True) -> str:
        text = self.activity
        if not text:
            return ""
        if self.activity_until is not None and countdown:
            text += f" in {max(0, math.ceil(self.activity_until - time.monotonic()))} s"
        return f"{text}: {self.activity_reason}" if self.activity_reason else text


def _server_badge(server: str, link: str) -> Content:
    """ "⇄ host:port" where the agent runs, warning "⇄ host:port reconnecting…" when cut off."""
    if link:
        return Content.styled(f"⇄ {server} {link}", "$text-warning")
    return Content.styled(f"⇄ {server}", "$text-accent")


def _sandbox_badge(sandbox: str) -> Content:
    """ "sandbox: workspace-write", "sandbox: read-only", or a warning: "no sandbox", or
    "sandbox unknown" (an agent server that does not say)."""
    if sandbox == "off":
        return Content.styled("no sandbox", "$text-warning")
    if sandbox == "unknown":
        return Content.styled("sandbox unknown", "$text-warning")
    mode, _, network = sandbox.partition(", ")
    text = f"sandbox: {mode}" + (" +net" if network == "network" else "")
    return Content.styled(text, "$text-success")


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _width(pieces: list[tuple[int, Content]]) -> int:
    return sum(piece.cell_length for _, piece in pieces) + 2 * (len(pieces) - 1)


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"


def _tokens(count: int | None) -> str:
    if not count:
        return "?"
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M".replace(".0M", "M")
    if count >= 1000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return str(count)


def _short_path(path: str) -> str:
    home = os.path.expanduser("~")
    text = "~" + path[len(home) :] if path.startswith(home) and home != "/" else path
    parts = Path(text).parts
    return text if len(parts) <= 3 else str(Path("…", *parts[-2:]))
