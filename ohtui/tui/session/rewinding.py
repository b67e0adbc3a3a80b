"""Rewinding and forking: the user's messages to go back to (/rewind, Esc Esc), what going
back to one would restore, the rewind itself, and forks (/fork, or at a chosen message).

Everything runs on a thread while no run goes on; results come back as messages. The
engine does the work (`ohtui.sdk.conversation.rewind`, `fork`, `navigate_to`); its
checkpoints live in their own store, so the user's own git state is never touched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ohtui.tui import messages as msg
from ohtui.tui.checkpoint_types import FileChange
from ohtui.tui.rewind_types import RewindAction, RewindPreview, TurnRow
from ohtui.tui.session.branches import active_branch, newest_page, switch_target
from ohtui.tui.session.words import describe, sentence

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation
    from ohtui.sdk.conversation.rewind import RewindPlan, Turn
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)

FIRST_PREVIEWS = 16
"""Turns whose preview is read before the list opens (a screenful; the rest as they come
into view)."""
RUNNING = "The agent is running: stop it (Ctrl+C) or let it finish, then {what} again."


class Rewinding:
    """Lists the points to go back to, plans, rewinds and forks one conversation."""

    def __init__(self, link: Link, running: Callable[[], bool]) -> None:
        """`running`: whether a run is going on (nothing moves then)."""
        self._link = link
        self._running = running
        self._plans: dict[str, RewindPlan] = {}
        self._busy = False

    def _work(self, what: str, work: Callable[[BaseConversation], None]) -> bool:
        """Run `work` on a thread unless the conversation cannot move now (opening, running,
        busy with another rewind): then say why and return False. A failure becomes a
        notice."""
        link = self._link
        conversation = link.conversation
        if conversation is None:
            link.post(msg.Notice(f"The conversation is still opening: {what} in a moment."))
            return False
        if self._running():
            link.post(msg.Notice(RUNNING.format(what=what), "warning"))
            return False

        def guarded() -> None:
            from ohtui.sdk.conversation.exceptions import CheckpointError

            try:
                work(conversation)
            except (CheckpointError, ValueError) as exc:
                link.post(msg.Notice(sentence(str(exc)), "warning"))
            except Exception as exc:
                logger.warning("%s failed", what, exc_info=True)
                link.post(msg.Notice(f"{sentence(what)[:-1]} failed: {describe(exc)}", "error"))

        link.spawn(guarded, "ohtui-rewind")
        return True

    # --- the points to go back to ---------------------------------------------------------

    def list_turns(self) -> bool:
        """Post the user's messages on the active branch, newest first (RewindTurns), the
        first ones with what followed them. False when refused (the user was told why)."""

        def work(conversation: BaseConversation) -> None:
            from ohtui.sdk.conversation.rewind import reply_preview, user_turns

            branch = active_branch(conversation)
            turns = user_turns(branch)
            rows = [
                _row(turn, reply_preview(branch, turn) if n < FIRST_PREVIEWS else None)
                for n, turn in enumerate(turns)
            ]
            self._link.post(msg.RewindTurns(rows))

        return self._work("/rewind", work)

    def previews(self, rows: Sequence[TurnRow]) -> None:
        """Post what followed each of `rows` (RewindPreviews), read on a thread."""
        link = self._link
        conversation = link.conversation
        if conversation is None or not rows:
            return

        def work() -> None:
            from ohtui.sdk.conversation.rewind import reply_preview

            branch = active_branch(conversation)
            found = {}
            for row in rows:
                position = branch.position_of(row.event_id)
                if position is not None:
                    turn = _turn(row, position)
                    found[row.event_id] = reply_preview(branch, turn)
            link.post(msg.RewindPreviews(found))

        link.spawn(work, "ohtui-rewind-previews")

    def plan(self, row: TurnRow) -> None:
        """Work out what rewinding to `row` would restore and post it (RewindPlanned)."""

        def work(conversation: BaseConversation) -> None:
            from ohtui.sdk.conversation.rewind import plan_rewind

            plan = plan_rewind(conversation, row.event_id)
            self._plans[row.event_id] = plan
            changes = tuple(FileChange(c.path, c.status) for c in plan.changes)
            self._link.post(msg.RewindPlanned(RewindPreview(row, changes, plan.code_note)))

        self._work("/rewind", work)

    # --- going back -----------------------------------------------------------------------

    def rewind(self, row: TurnRow, action: RewindAction) -> None:
        """Restore what `action` says; the conversation then shows its new active branch,
        with the message's text given back to edit and send again (BranchShown)."""
        link = self._link

        def work(conversation: BaseConversation) -> None:
            from ohtui.sdk.conversation.rewind import RewindScope, plan_rewind, rewind

            with link.lock:
                if self._busy:
                    return
                self._busy = True
            try:
                plan = self._plans.pop(row.event_id, None)
                if plan is None:
                    plan = plan_rewind(conversation, row.event_id)
                scope = {
                    RewindAction.BOTH: RewindScope.BOTH,
                    RewindAction.CONVERSATION: RewindScope.CONVERSATION,
                    RewindAction.CODE: RewindScope.CODE,
                }[action]
                rewind(conversation, plan, scope)
            finally:
                with link.lock:
                    self._busy = False
            restored = len(plan.changes) if action.needs_code and plan.checkpoint else 0
            if action is RewindAction.CODE:
                link.post(msg.Notice(_code_notice(plan, restored)))
                return
            page = newest_page(conversation)
            link.post(
                msg.BranchShown(
                    page.events,
                    page.total,
                    page.has_older,
                    page.branches,
                    prefill=row.text,
                    notice=_rewound_notice(row, action, restored),
                )
            )

        self._work("/rewind", work)

    def switch_branch(self, position: int) -> None:
        """Show the next branch leaving the event at `position` of the active branch (its
        newest event becomes HEAD); BranchShown."""
        link = self._link

        def work(conversation: BaseConversation) -> None:
            target = switch_target(conversation, position)
            if target is None:
                link.post(msg.Notice("Only one branch goes on from there."))
                return
            leaf, number, total = target
            conversation.navigate_to(leaf)
            page = newest_page(conversation)
            notice = f"Switched to branch {number} of {total}; the others are kept."
            link.post(
                msg.BranchShown(page.events, page.total, page.has_older, page.branches, "", notice)
            )

        self._work("switching branches", work)

    def fork(self, title: str = "", at: TurnRow | None = None, with_code: bool = False) -> None:
        """Fork the conversation (at HEAD, or `at` a message: its whole turn) under `title`
        (default "Fork of <its title>"), the workspace first restored to the end of that turn
        with `with_code`; post Forked for the app to open it."""

        def work(conversation: BaseConversation) -> None:
            name = title.strip() or _fork_title(conversation)
            end, restored = None, 0
            if at is not None:
                end, restored = _turn_end(conversation, at, with_code)
            fork = conversation.fork(title=name, from_event_id=end)
            fork_id = fork.id.hex
            fork.close()
            self._link.post(msg.Forked(fork_id, name, restored))

        self._work("/fork", work)


def _row(turn: Turn, preview: str | None) -> TurnRow:
    return TurnRow(turn.event_id, turn.number, turn.text, preview)


def _turn(row: TurnRow, position: int) -> Turn:
    from ohtui.sdk.conversation.rewind import Turn

    return Turn(row.event_id, position, row.text, "", row.number)


def _turn_end(conversation: BaseConversation, at: TurnRow, with_code: bool) -> tuple[str, int]:
    """The last event of the turn `at` starts, and (`with_code`) how many files restoring the
    workspace to the end of that turn changed."""
    from ohtui.sdk.conversation.rewind import checkpoint_after, turn_end

    branch = active_branch(conversation)
    position = branch.position_of(at.event_id)
    if position is None:
        raise ValueError(f"message {at.number} is no longer on the conversation's branch")
    end = turn_end(branch, _turn(at, position))
    if not with_code:
        return end, 0
    end_position = branch.position_of(end)
    checkpoint = checkpoint_after(branch, end_position if end_position is not None else position)
    if checkpoint is None or checkpoint.checkpoint_id is None:
        return end, 0  # nothing recorded changed the workspace since: it is as it was
    changes = conversation.checkpoint_changes(checkpoint.checkpoint_id)
    if changes:
        conversation.restore_checkpoint(checkpoint.checkpoint_id)
    return end, len(changes)


def _fork_title(conversation: BaseConversation) -> str:
    """ "Fork of" the source's title; untitled, its first message (as listings name it)."""
    from ohtui.sdk.conversation.rewind import user_turns

    source = conversation.state.title
    if not source:
        turns = user_turns(active_branch(conversation))
        first = turns[-1].text.splitlines()[0].strip() if turns and turns[-1].text else ""
        source = first if len(first) <= FORK_TITLE_WORDS else first[: FORK_TITLE_WORDS - 1] + "…"
    return f"Fork of {source}" if source else f"Fork of {conversation.id.hex[:8]}"


FORK_TITLE_WORDS = 48
"""Characters of a first message kept in a fork's default title."""


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _rewound_notice(row: TurnRow, action: RewindAction, restored: int) -> str:
    code = f" and the code ({_files(restored)} restored)" if action.needs_code and restored else ""
    return (
        f"Rewound the conversation{code} to before message {row.number}: edit it and send, "
        "or send something else. The old branch is kept."
    )


def _code_notice(plan: RewindPlan, restored: int) -> str:
    if not restored:
        return plan.code_note or "The code is already as it was at that message."
    return (
        f"Restored the code to message {plan.turn.number} ({_files(restored)}); the "
        "conversation goes on from here. /checkpoints can take it back."
    )
