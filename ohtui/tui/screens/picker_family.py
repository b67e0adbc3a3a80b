"""Forks and branches in the picker: each fork listed under its parent, what the preview says
of where a fork comes from and of a conversation's branches, and the list of its branches
(`BranchesScreen`) from which one is opened (`OpenBranch`, what the picker then returns)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ohtui.tui.picker_rows import FORK_MARK, relative_time
from ohtui.tui.widgets.marked import MarkedOptionList

if TYPE_CHECKING:
    from ohtui.sdk.conversation.branch_tips import BranchTip, ConversationTree
    from ohtui.sdk.conversation.summary import ConversationSummary

MAX_DEPTH = 4
"""Forks of forks deeper than this are indented no further (the row would be all margin)."""
BRANCHES_KEY = "ctrl+t"
"""Lists the highlighted conversation's branches (a key that types nothing in the search)."""
_MESSAGE_CHARS = 120


@dataclass(frozen=True, slots=True)
class OpenBranch:
    """Open this conversation with HEAD moved to `leaf_event_id` (a branch chosen)."""

    conversation_id: str
    leaf_event_id: str


def family_order(rows: Sequence[ConversationSummary]) -> list[tuple[ConversationSummary, int]]:
    """The rows of a page, each fork right after its parent (and the forks of that fork after
    it), with how deep it is; a fork whose parent is not among the rows keeps its place at
    depth 0. Otherwise the listing's order."""
    ids = {row.id for row in rows}
    forks: dict[str, list[ConversationSummary]] = {}
    tops: list[ConversationSummary] = []
    for row in rows:
        parent = row.forked_from
        if parent is not None and parent in ids and parent != row.id:
            forks.setdefault(parent, []).append(row)
        else:
            tops.append(row)
    ordered: list[tuple[ConversationSummary, int]] = []
    placed: set[str] = set()
    stack = [(row, 0) for row in reversed(tops)]
    while stack:
        row, depth = stack.pop()
        if row.id in placed:
            continue
        placed.add(row.id)
        ordered.append((row, min(depth, MAX_DEPTH)))
        stack += [(fork, depth + 1) for fork in reversed(forks.get(row.id, []))]
    # Rows only a loop of parents leads to (none the engine makes): listed all the same.
    ordered += [(row, 0) for row in rows if row.id not in placed]
    return ordered


def short_id(conversation_id: str) -> str:
    """The first 8 characters of an id, as `--resume` takes it."""
    return conversation_id[:8]


def tree_lines(
    summary: ConversationSummary,
    tree: ConversationTree | None,
    parent_title: str | None,
    *,
    now: float,
) -> list[Content]:
    """What the preview says of a conversation's place in the tree: where a fork comes from,
    and how many branches it has and which one is active (nothing for a plain one)."""

    def field(label: str, *value: str | tuple[str, str]) -> Content:
        return Content.assemble((f"{label:<10}", "$foreground-muted"), *value)

    lines: list[Content] = []
    if summary.forked_from is not None:
        parent = parent_title or f"{short_id(summary.forked_from)} (deleted)"
        forked_time = tree.forked_at_time if tree is not None else None
        when = (
            f" at its event of {relative_time(forked_time, now)}"
            if forked_time is not None
            else f", made {relative_time(summary.created_at, now)}"
        )
        lines.append(field("fork of", (parent, "bold"), (when, "$foreground-muted")))
    if tree is not None and len(tree.tips) > 1:
        active = tree.active
        which: list[str | tuple[str, str]] = (
            ["active: ", (_message(active), "italic")]
            if active is not None
            else [("HEAD at an earlier event", "$text-warning")]
        )
        lines.append(
            field(
                "branches",
                (str(len(tree.tips)), "bold"),
                " · ",
                *which,
                (f" · {BRANCHES_KEY} lists them", "$foreground-muted"),
            )
        )
    return lines


def _message(tip: BranchTip) -> str:
    """The user's last message on a branch, on one line."""
    text = " ".join((tip.last_user_message or "").split())
    if not text:
        return "(no message of yours)"
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def branch_prompt(tip: BranchTip, *, now: float) -> Content:
    """One branch in the list: its last message of the user's; active or not, when, how long."""
    muted = "$foreground-muted"
    details: list[str | tuple[str, str]] = []
    if tip.active:
        details += [("● active", "bold $text-accent"), (" · ", muted)]
    details += [
        (relative_time(tip.timestamp, now), muted),
        (f" · {tip.events} event{'' if tip.events == 1 else 's'}", muted),
    ]
    return Content.assemble((FORK_MARK, "$text-accent"), (_message(tip), "bold"), "\n  ", *details)


class BranchesScreen(ModalScreen[str | None]):
    """A conversation's branches, newest first: Enter gives the chosen tip's event id."""

    CSS_PATH = "picker_branches.tcss"
    BINDINGS = [Binding("escape", "cancel", "Back")]

    def __init__(self, title: str, tips: Sequence[BranchTip], *, now: float) -> None:
        super().__init__()
        self._title = title
        self._tips = tuple(tips)
        self._now = now

    def compose(self) -> ComposeResult:
        """The heading, the branches and a key legend."""
        with Vertical(id="dialog"):
            yield Static(
                Content.assemble(
                    (f"{len(self._tips)} branches of ", "bold $text-primary"), (self._title, "bold")
                ),
                id="heading",
            )
            yield MarkedOptionList(
                *(
                    Option(branch_prompt(tip, now=self._now), id=tip.leaf_event_id)
                    for tip in self._tips
                ),
                id="branches",
                markup=False,
            )
            yield Static(
                "↑↓ move · enter open there · esc back", id="branches-legend", markup=False
            )

    def on_mount(self) -> None:
        """Start on the active branch."""
        active = [i for i, tip in enumerate(self._tips) if tip.active]
        if active:
            self.query_one(OptionList).highlighted = active[0]

    @on(OptionList.OptionSelected, "#branches")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Back to the picker."""
        self.dismiss(None)
