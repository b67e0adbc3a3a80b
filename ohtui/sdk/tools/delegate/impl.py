"""DelegateExecutor: spawns named sub-agents and runs their tasks in parallel threads."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from ohtui.sdk.subagent.registry import get_agent_factory
from ohtui.sdk.subagent.spawn import (
    ConfirmationHandler,
    open_sub_conversation,
    run_until_settled,
    sub_agent,
    subagents_dir,
)
from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.delegate.definition import DelegateAction, DelegateObservation

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation

logger = logging.getLogger(__name__)

__all__ = ["ConfirmationHandler", "DelegateExecutor"]


class DelegateExecutor(ToolExecutor[DelegateAction, DelegateObservation]):
    """Spawns sub-agents under names (at most `max_children`) and delegates tasks to them,
    blocking until every one has answered."""

    def __init__(
        self, max_children: int = 5, confirmation_handler: ConfirmationHandler | None = None
    ) -> None:
        self._parent_conversation: LocalConversation | None = None
        self._sub_agents: dict[str, LocalConversation] = {}
        self._max_children = max_children
        self._confirmation_handler = confirmation_handler
        self._running: set[str] = set()

    @property
    def parent_conversation(self) -> LocalConversation:
        """The parent conversation; RuntimeError before the first call."""
        if self._parent_conversation is None:
            raise RuntimeError(
                "Parent conversation not set. This should be set automatically "
                "on the first call to the executor."
            )
        return self._parent_conversation

    def __call__(
        self, action: DelegateAction, conversation: LocalConversation | None = None
    ) -> DelegateObservation:
        """Spawn or delegate; every failure is an error observation."""
        if self._parent_conversation is None:
            self._parent_conversation = conversation
        if action.command == "spawn":
            return self._spawn_agents(action)
        return self._delegate_tasks(action)

    @staticmethod
    def _format_agent_label(agent_id: str, agent_type: str) -> str:
        return f"{agent_id} ({agent_type})"

    @staticmethod
    def _resolve_agent_type(action: DelegateAction, index: int) -> str:
        types = action.agent_types or []
        chosen = types[index].strip() if index < len(types) else ""
        return chosen or "general-purpose"

    @staticmethod
    def _error(action: DelegateAction, text: str) -> DelegateObservation:
        return DelegateObservation.from_text(text=text, command=action.command, is_error=True)

    def _spawn_agents(self, action: DelegateAction) -> DelegateObservation:
        if not action.ids:
            return self._error(action, "At least one ID is required for spawn action")
        if action.agent_types is not None and len(action.agent_types) > len(action.ids):
            return self._error(
                action,
                f"agent_types length ({len(action.agent_types)}) cannot exceed ids length "
                f"({len(action.ids)})",
            )
        new_ids = set(action.ids) - set(self._sub_agents)
        if len(self._sub_agents) + len(new_ids) > self._max_children:
            return self._error(
                action,
                f"Cannot spawn {len(action.ids)} agents. Already have {len(self._sub_agents)} "
                f"agents, maximum is {self._max_children}",
            )
        busy = sorted(set(action.ids) & self._running)
        if busy:
            return self._error(action, f"sub-agents at work cannot be replaced: {', '.join(busy)}")
        created: list[tuple[str, str, LocalConversation]] = []
        try:
            parent = self.parent_conversation
            folder = subagents_dir(parent)
            types = [self._resolve_agent_type(action, i) for i in range(len(action.ids))]
            factories = [get_agent_factory(t) for t in types]
            for agent_id, agent_type, factory in zip(action.ids, types, factories, strict=True):
                visualizer = None
                if parent._visualizer is not None:
                    visualizer = parent._visualizer.create_sub_visualizer(agent_id)
                conversation = open_sub_conversation(
                    parent,
                    sub_agent(parent, factory),
                    factory=factory,
                    persistence_dir=folder,
                    visualizer=visualizer,
                )
                created.append((agent_id, agent_type, conversation))
        except Exception as exc:
            for _, _, conversation in created:
                conversation.close()
            logger.warning("failed to spawn agents: %s", exc, exc_info=True)
            return self._error(action, f"failed to spawn agents: {exc}")
        for agent_id, agent_type, conversation in created:
            previous = self._sub_agents.get(agent_id)
            if previous is not None:
                previous.close()
            self._sub_agents[agent_id] = conversation
            logger.info("spawned sub-agent %s", self._format_agent_label(agent_id, agent_type))
        labels = [
            self._format_agent_label(agent_id, agent_type) for agent_id, agent_type, _ in created
        ]
        return DelegateObservation.from_text(
            text=f"Successfully spawned {len(action.ids)} sub-agents: {', '.join(labels)}",
            command=action.command,
        )

    def _delegate_tasks(self, action: DelegateAction) -> DelegateObservation:
        if not action.tasks:
            return self._error(action, "at least one task is required for delegate action")
        missing = sorted(set(action.tasks) - set(self._sub_agents))
        if missing:
            return self._error(
                action,
                f"sub-agents not found: {', '.join(missing)}. "
                f"Available agents: {', '.join(self._sub_agents) or 'none'}",
            )
        parent = self.parent_conversation
        sender = getattr(parent._visualizer, "_name", None)
        results: dict[str, str] = {}
        errors: dict[str, str] = {}

        def run(agent_id: str, conversation: LocalConversation, task: str) -> None:
            from ohtui.sdk.conversation.response_utils import get_agent_final_response

            try:
                conversation.send_message(task, sender=sender)
                run_until_settled(agent_id, conversation, self._confirmation_handler)
                answer = get_agent_final_response(conversation.state.events)
                results[agent_id] = answer or "No response from sub-agent"
            except Exception as exc:
                logger.warning("sub-agent %s failed: %s", agent_id, exc, exc_info=True)
                errors[agent_id] = f"Sub-agent {agent_id} failed: {exc}"

        threads = []
        for agent_id, task in action.tasks.items():
            self._running.add(agent_id)
            thread = threading.Thread(
                target=run,
                args=(agent_id, self._sub_agents[agent_id], task),
                name=f"delegate-{agent_id}",
                daemon=True,
            )
            threads.append(thread)
            thread.start()
        for thread in threads:
            thread.join()
        self._running.difference_update(action.tasks)
        stats = parent.conversation_stats
        for agent_id in action.tasks:
            sub_stats = self._sub_agents[agent_id].conversation_stats
            stats.usage_to_metrics[f"delegate:{agent_id}"] = sub_stats.get_combined_metrics()
        parent.state.notify_stats_changed()
        lines = []
        for index, agent_id in enumerate(action.tasks, 1):
            if agent_id in results:
                lines.append(f"{index}. Agent {agent_id}: {results[agent_id]}")
            else:
                lines.append(
                    f"{index}. Agent {agent_id} ERROR: {errors.get(agent_id, 'No result')}"
                )
        text = f"Completed delegation of {len(action.tasks)} tasks"
        if errors:
            text += f" with {len(errors)} errors"
        text += "\n\nResults:\n" + "\n".join(lines)
        return DelegateObservation.from_text(text=text, command=action.command)

    def pause(self) -> None:
        """Pause the sub-agents at work (the parent conversation was paused)."""
        for agent_id in list(self._running):
            self._sub_agents[agent_id].pause()

    def interrupt(self) -> None:
        """Stop the sub-agents at work now (the parent conversation was interrupted)."""
        for agent_id in list(self._running):
            self._sub_agents[agent_id].interrupt()

    def close(self) -> None:
        """Close every sub-agent's conversation."""
        for agent_id, conversation in list(self._sub_agents.items()):
            try:
                conversation.close()
            except Exception as exc:  # one failing close must not keep the others open
                logger.warning("error closing sub-agent '%s': %s", agent_id, exc, exc_info=True)
        self._sub_agents.clear()
