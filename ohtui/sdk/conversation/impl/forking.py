"""Forking a local conversation: a new conversation holding a copy of its tree, or of one
branch of it, under a new id (`LocalConversation.fork`).

A persisted source is copied inside its database in one transaction (rows, not parsed
events: a 10,000-event fork costs one statement), then the fork is opened as any saved
conversation is. The fork records its parent (`ConversationStore.fork_origin`) so listings
can show the family.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.agent.conversation_contract import ConversationExecutionStatus
from ohtui.sdk.conversation.exceptions import ConversationIdTakenError
from ohtui.sdk.conversation.impl.checkpointing import STORE_FOLDER
from ohtui.sdk.conversation.stats import ConversationStats
from ohtui.sdk.conversation.types import ConversationID
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import EventID
from ohtui.sdk.workspace.local import LocalWorkspace

__all__ = ["ConversationIdTakenError", "copy_agent", "fork_local"]

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState


def copy_agent(agent: AgentBase) -> AgentBase:
    """An agent of the fork's own: the same configuration, no shared objects (each
    conversation binds its own call context to its LLM)."""
    data = agent.model_dump(context={"expose_secrets": True})
    return type(agent).model_validate(data)


def fork_local(
    source: LocalConversation,
    *,
    conversation_id: ConversationID | None,
    agent: AgentBase | None,
    title: str | None,
    tags: dict[str, str] | None,
    reset_metrics: bool,
    from_event_id: EventID | None,
) -> LocalConversation:
    """See `LocalConversation.fork`."""
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation

    fork_id = conversation_id or uuid.uuid4()
    if fork_id == source.id:
        raise ConversationIdTakenError(f"conversation {fork_id.hex} already exists")
    fork_agent = copy_agent(agent if agent is not None else source.agent)
    state = source._state
    with state:
        if from_event_id is not None and from_event_id not in state.events:
            raise ValueError(f"Unknown from_event_id: {from_event_id}")
        if from_event_id is None:
            leaf, empty = state._resolve_active_leaf(), state.head_is_empty
        else:
            leaf, empty = from_event_id, False
        data = _fork_state(state, fork_id, fork_agent, title, tags, reset_metrics, leaf, empty)
        store, key = state._store, state._key
        if store is None or key is None or state.persistence_dir is None:
            base = None
        else:
            state.events.flush()
            indexes = None if from_event_id is None else state.events.branch_indexes(leaf)
            try:
                store.fork(
                    key,
                    fork_id.hex,
                    json.dumps(data),
                    {**state._summary(), "title": data.get("title"), "status": "idle"},
                    indexes,
                    leaf if not empty else None,
                    (source.id.hex, from_event_id),
                )
            except ValueError as exc:  # the store's one refusal: the id is saved already
                raise ConversationIdTakenError(str(exc)) from exc
            base = str(Path(state.persistence_dir).parent)
            _copy_checkpoints(Path(state.persistence_dir), Path(base) / fork_id.hex)
        workspace = source.workspace
        assert isinstance(workspace, LocalWorkspace)
        fork = LocalConversation(
            agent=fork_agent,
            workspace=workspace,
            persistence_dir=base,
            conversation_id=fork_id,
            **source._fork_options,
        )
        if base is None:
            _copy_in_memory(state, fork._state, data, from_event_id)
    return fork


def _copy_checkpoints(source_dir: Path, fork_dir: Path) -> None:
    """Give the fork the source's checkpoints, so its code can go back to the same points:
    git's objects never change once written, so they are hard-linked (a 10,000-file store
    costs no copy of its contents); the rest is copied. The lock is not."""
    source = source_dir / STORE_FOLDER
    if not source.is_dir():
        return
    shutil.copytree(
        source,
        fork_dir / STORE_FOLDER,
        copy_function=_link_object_or_copy,
        ignore=shutil.ignore_patterns("lock", "*.lock"),
        dirs_exist_ok=True,
    )


def _link_object_or_copy(source: str, target: str) -> None:
    if f"{os.sep}objects{os.sep}" in source:
        try:
            os.link(source, target)
            return
        except OSError:  # another file system, or links refused: a copy does
            pass
    shutil.copy2(source, target)


def _fork_state(
    state: ConversationState,
    fork_id: ConversationID,
    agent: AgentBase,
    title: str | None,
    tags: dict[str, str] | None,
    reset_metrics: bool,
    leaf: EventID | None,
    empty: bool,
) -> dict[str, Any]:
    """The source's saved state, made the fork's."""
    data: dict[str, Any] = json.loads(state._dump())
    data["id"] = str(fork_id)
    data["agent"] = json.loads(agent.model_dump_json())  # what a resume checks the tools of
    data["execution_status"] = ConversationExecutionStatus.IDLE.value
    data["tags"] = dict(tags or {})
    if title is not None:
        data["tags"]["title"] = title
        data["title"] = title
    if reset_metrics:
        data["stats"] = json.loads(ConversationStats().model_dump_json())
    data["leaf_event_id"] = leaf
    data["head_is_empty"] = empty
    data.pop("persistence_dir", None)
    return data


def _copy_in_memory(
    source: ConversationState,
    fork: ConversationState,
    data: dict[str, Any],
    from_event_id: EventID | None,
) -> None:
    """Fill an in-memory fork: its events copied (never shared: events hold lists; each
    keeps its parent, which a branch copies before it), then the state the source had.

    Each event is copied through its saved form, as a persisted fork's are read back: a
    system prompt's tools become the descriptions the model was offered, never the
    source's live tools (whose shell belongs to the source).
    """
    events = source.events
    chosen = list(events) if from_event_id is None else events.path_to_root(from_event_id)
    for event in chosen:
        fork.events.append(Event.model_validate_json(event.model_dump_json()))
    with fork:
        fork.tags = data["tags"]
        fork.title = data.get("title")
        fork.stats = ConversationStats.model_validate(data["stats"])
        fork.agent_state = copy.deepcopy(source.agent_state)
        fork.activated_knowledge_skills = list(source.activated_knowledge_skills)
        if data["leaf_event_id"] is not None or data["head_is_empty"]:
            fork.move_head(data["leaf_event_id"])
