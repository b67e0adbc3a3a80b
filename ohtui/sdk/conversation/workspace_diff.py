"""What the agent changed in the workspace, since the conversation began or since one of the
user's messages, file by file (`/diff`).

From the checkpoints where the conversation has them: the workspace as it was before the
first action that could change it (after the message: the first checkpoint recorded after
it, as a rewind uses) compared with the workspace now. The store answers the other way
round (what restoring would change), so its diff is reversed; on a server it comes through
the same route as a restore's preview. Where no checkpoint could be kept, a local workspace
in a git repository is compared with its last commit instead, read only, and the result
says so. Nothing here changes the workspace or the user's git state. The conversation's
secret values are masked in what is shown.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.branch import Branch
from ohtui.sdk.conversation.git_diff import GitDiffUnavailable, git_diff, is_repository
from ohtui.sdk.conversation.impl.remote_state import RemoteState
from ohtui.sdk.conversation.rewind import checkpoint_after
from ohtui.sdk.conversation.state import ConversationState
from ohtui.sdk.event.checkpoint import CheckpointEvent, of_kinds
from ohtui.sdk.utils.unified_diff import FilePatch, reverse, split_patches
from ohtui.sdk.workspace.local import LocalWorkspace

if TYPE_CHECKING:
    from ohtui.sdk.conversation.base import BaseConversation

REVERSED = {"added": "deleted", "deleted": "added", "modified": "modified"}
"""A restore's change to a file, as the change the agent made."""


class DiffSource(StrEnum):
    """Where a workspace diff came from; the value is how it is named to the user."""

    CHECKPOINTS = "checkpoints"
    GIT = "git (against the last commit)"
    NONE = "nowhere"


@dataclass(frozen=True, slots=True)
class WorkspaceDiff:
    """The workspace's changes, file by file."""

    source: DiffSource
    files: list[FilePatch] = field(default_factory=list)
    """In path order. A file whose diff was left out (the whole diff too long) has no text."""
    note: str = ""
    """What the user should know: why this source, or why there is nothing to show."""
    cut: bool = False
    """The diff was too long: the files at its end have no text (`file_diff` reads one)."""
    checkpoint_id: str | None = None
    """The checkpoint compared with the workspace now (from the checkpoints)."""


def workspace_diff(conversation: BaseConversation, since: str | None = None) -> WorkspaceDiff:
    """What changed in the workspace since the conversation began (`since` None) or since
    the user's message `since` (an event id on the active branch; ValueError otherwise).
    CheckpointError when the checkpoints cannot be read."""
    branch = _branch(conversation)
    recorded = [e for e in of_kinds(branch, "CheckpointEvent") if isinstance(e, CheckpointEvent)]
    taken = [e for e in recorded if e.checkpoint_id is not None]
    if since is not None:
        position = branch.position_of(since)
        if position is None:
            raise ValueError("that message is no longer on the conversation's branch")
        base = checkpoint_after(branch, position)
    else:
        base = taken[0] if taken else None
    if base is not None and base.checkpoint_id is not None:
        return _from_checkpoint(conversation, base, recorded)
    if taken:
        return WorkspaceDiff(
            DiffSource.CHECKPOINTS, note="No change to the workspace was recorded since then."
        )
    missing = next((e.unavailable for e in recorded if e.unavailable), None)
    return _without_checkpoints(conversation, missing)


def _masked(conversation: BaseConversation, text: str) -> str:
    """`text` with the conversation's secret values masked: a file the agent wrote a key
    into shows the mask, never the key."""
    state = conversation.state
    if isinstance(state, ConversationState | RemoteState):
        return state.secret_registry.mask_secrets_in_output(text)
    return text


def _branch(conversation: BaseConversation) -> Branch:
    """The active branch, root first (a state that lists it: as a branch of its own)."""
    branch = conversation.state.active_branch()
    if isinstance(branch, Branch):
        return branch
    events = list(branch)
    return Branch(events, array("q", range(len(events))))


def _from_checkpoint(
    conversation: BaseConversation, base: CheckpointEvent, recorded: list[CheckpointEvent]
) -> WorkspaceDiff:
    assert base.checkpoint_id is not None
    changes = conversation.checkpoint_changes(base.checkpoint_id)
    if not changes:
        return WorkspaceDiff(
            DiffSource.CHECKPOINTS, note="The workspace is as it was then: nothing differs."
        )
    diff = _masked(conversation, conversation.checkpoint_diff(base.checkpoint_id))
    patches, cut = split_patches(reverse(diff))
    by_path = {patch.path: patch for patch in patches}
    files = []
    for change in changes:
        status = REVERSED[change.status]
        found = by_path.get(change.path)
        files.append(found or FilePatch(change.path, status, 0, 0, False, ""))  # type: ignore[arg-type]
    before = recorded[: next((n for n, e in enumerate(recorded) if e is base), 0)]
    skipped = next((e.unavailable for e in before if e.unavailable), None)
    note = (
        f"Earlier actions ran without a checkpoint ({skipped}): what they changed before "
        "then is not shown."
        if skipped
        else ""
    )
    return WorkspaceDiff(DiffSource.CHECKPOINTS, files, note, cut, base.checkpoint_id)


def file_diff(conversation: BaseConversation, checkpoint_id: str, path: str) -> FilePatch | None:
    """One file's change since the checkpoint, read alone (a file left out of a diff too
    long to read whole); None where it cannot be: a conversation on a server answers for
    the whole workspace only. CheckpointError when the checkpoint cannot be read."""
    checkpointing = getattr(conversation, "checkpointing", None)
    if checkpointing is None:
        return None
    diff = _masked(conversation, checkpointing.diff(checkpoint_id, [path]))
    patches, _ = split_patches(reverse(diff))
    return next((patch for patch in patches if patch.path == path), None)


def _without_checkpoints(conversation: BaseConversation, missing: str | None) -> WorkspaceDiff:
    """No checkpoint on the branch: nothing changed, or none could be kept (`missing` says
    why, when one was tried)."""
    keeps = getattr(conversation, "supports_checkpoints", None)
    local = isinstance(conversation.workspace, LocalWorkspace)
    if missing is None and (keeps is True or getattr(conversation, "checkpointing", None)):
        return WorkspaceDiff(
            DiffSource.CHECKPOINTS,
            note="The agent has not changed the workspace in this conversation.",
        )
    if not local:
        why = missing or "the agent server keeps no checkpoints"
        return WorkspaceDiff(
            DiffSource.NONE,
            note=f"No diff can be shown: {why}, and the workspace is on the server, "
            "not on this machine.",
        )
    why = (
        f"no checkpoint could be kept ({missing})"
        if missing
        else "this conversation kept no checkpoints"
    )
    workspace = conversation.workspace.working_dir
    if not is_repository(workspace):
        return WorkspaceDiff(
            DiffSource.NONE,
            note=f"No diff can be shown: {why}, and the workspace is not a git repository.",
        )
    try:
        found = git_diff(workspace)
    except GitDiffUnavailable as exc:
        return WorkspaceDiff(DiffSource.NONE, note=f"No diff can be shown: {why}, and {exc}.")
    patches, cut = split_patches(_masked(conversation, found.diff))
    patches.sort(key=lambda patch: patch.path)  # tracked and new files together, as git lists
    against = f"commit {found.commit}" if found.commit else "an empty repository"
    note = (
        f"{why[:1].upper()}{why[1:]}: shown is the workspace against its last commit "
        f"({against}), changes made before the conversation began included."
    )
    return WorkspaceDiff(DiffSource.GIT, patches, note, cut)
