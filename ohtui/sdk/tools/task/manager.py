"""TaskManager: starts, resumes and runs the task tool's sub-agents, one conversation each.

A task's conversation is saved (under the parent's own directory, or a temporary one when
the parent keeps nothing on disk) and closed after each run, so `resume` opens it again
with its whole history. Its cost is counted in the parent's stats under `task:<id>`.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import uuid
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.conversation.response_utils import get_agent_final_response
from ohtui.sdk.conversation.state import ConversationExecutionStatus
from ohtui.sdk.subagent.registry import AgentFactory, get_agent_factory
from ohtui.sdk.subagent.spawn import (
    ConfirmationHandler,
    open_sub_conversation,
    run_until_settled,
    stop_detail,
    sub_agent,
    subagents_dir,
)

if TYPE_CHECKING:
    from ohtui.sdk.agent.base import AgentBase
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation

logger = logging.getLogger(__name__)

__all__ = ["ConfirmationHandler", "Task", "TaskManager", "TaskStatus"]


class TaskStatus(StrEnum):
    """Where a task stands."""

    RUNNING = "running"
    COMPLETED = "completed"
    ERROR = "error"


class Task(BaseModel):
    """One sub-agent task: its id, status, result or error, and its conversation's id."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: str = Field(description="The task's id, given to `resume`.")
    status: TaskStatus = Field(description="Where the task stands.")
    conversation_id: uuid.UUID = Field(description="The id of the task's conversation.")
    result: str | None = Field(default=None, description="The sub-agent's final answer.")
    error: str | None = Field(default=None, description="Why the task failed.")
    conversation: Any = Field(
        default=None, exclude=True, description="The task's conversation while it runs."
    )

    def set_result(self, result: str) -> None:
        """Mark the task completed with `result`."""
        self.result, self.error, self.status = result, None, TaskStatus.COMPLETED

    def set_error(self, error: str) -> None:
        """Mark the task failed with `error`."""
        self.result, self.error, self.status = None, error, TaskStatus.ERROR


class TaskManager:
    """The sub-agent tasks of one parent conversation."""

    def __init__(self, confirmation_handler: ConfirmationHandler | None = None) -> None:
        self._parent_conversation: LocalConversation | None = None
        self._confirmation_handler = confirmation_handler
        self._tasks: dict[str, Task] = {}
        self._tasks_lock = threading.Lock()
        self._persistence_dir: Path | None = None
        self._temporary_dir = False
        self._running: dict[str, LocalConversation] = {}
        self._stopping = threading.Event()

    # --- the parent ----------------------------------------------------------------------

    def attach_parent(self, conversation: LocalConversation) -> None:
        """Attach the parent conversation (once; another one later is ignored, with a warning)."""
        if self._parent_conversation is not None and self._parent_conversation is not conversation:
            logger.warning("attach_parent called with a different conversation; ignoring.")
        self._ensure_parent(conversation)

    def _ensure_parent(self, conversation: LocalConversation) -> None:
        if self._parent_conversation is not None:
            return
        self._parent_conversation = conversation
        folder = subagents_dir(conversation)
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="openhands_tasks_"))
            self._temporary_dir = True
        self._persistence_dir = folder

    @property
    def parent_conversation(self) -> LocalConversation:
        """The parent conversation; RuntimeError before the first task attaches it."""
        if self._parent_conversation is None:
            raise RuntimeError(
                "Parent conversation not set. This should be set automatically "
                "on the first call to the executor."
            )
        return self._parent_conversation

    # --- tasks ---------------------------------------------------------------------------

    def start_task(
        self,
        prompt: str,
        subagent_type: str = "default",
        resume: str | None = None,
        description: str | None = None,
        conversation: LocalConversation | None = None,
    ) -> Task:
        """Run a sub-agent task to its end (a new one, or `resume`'s conversation again) and
        return it, completed or failed. ValueError for an unknown agent type or task id."""
        if conversation is not None:
            self._ensure_parent(conversation)
        if resume:
            task = self._resume_task(resume=resume, subagent_type=subagent_type)
        else:
            task = self._create_task(subagent_type=subagent_type, description=description)
        return self._run_task(task=task, prompt=prompt)

    def _get_sub_agent(self, subagent_type: str) -> AgentBase:
        """A new Agent of the registered type (ValueError for an unknown type)."""
        return sub_agent(self.parent_conversation, get_agent_factory(subagent_type))

    @staticmethod
    def _run_stop_detail(
        conversation: LocalConversation, status: ConversationExecutionStatus | None = None
    ) -> str:
        """Why a task's conversation stopped without finishing, with its partial answer."""
        return stop_detail(conversation, status)

    def _generate_ids(self) -> tuple[str, uuid.UUID]:
        return f"task_{len(self._tasks) + 1:08x}", uuid.uuid4()

    def _create_task(self, subagent_type: str, description: str | None) -> Task:
        factory = get_agent_factory(subagent_type)
        agent = sub_agent(self.parent_conversation, factory)
        with self._tasks_lock:
            task_id, conversation_id = self._generate_ids()
            conversation = self._open(factory, agent, conversation_id, description or task_id)
            task = Task(
                id=task_id,
                conversation_id=conversation_id,
                conversation=conversation,
                status=TaskStatus.RUNNING,
            )
            self._tasks[task_id] = task
            return task

    def _resume_task(self, resume: str, subagent_type: str) -> Task:
        with self._tasks_lock:
            known = self._tasks.get(resume)
            if known is None:
                raise ValueError(
                    f"Task '{resume}' not found. "
                    f"Available tasks: {', '.join(sorted(self._tasks)) or 'none'}"
                )
            if resume in self._running:
                raise ValueError(f"Task '{resume}' is running; wait for its result first.")
            factory = get_agent_factory(subagent_type)
            agent = sub_agent(self.parent_conversation, factory)
            conversation = self._open(factory, agent, known.conversation_id, resume)
            task = known.model_copy(
                update={"conversation": conversation, "status": TaskStatus.RUNNING}
            )
            self._tasks[resume] = task
            return task

    def _open(
        self, factory: AgentFactory, agent: Any, conversation_id: uuid.UUID, label: str
    ) -> LocalConversation:
        parent = self.parent_conversation
        visualizer = None
        parent_visualizer = getattr(parent, "_visualizer", None)
        if parent_visualizer is not None:
            visualizer = parent_visualizer.create_sub_visualizer(label)
        return open_sub_conversation(
            parent,
            agent,
            factory=factory,
            persistence_dir=self._persistence_dir,
            conversation_id=conversation_id,
            visualizer=visualizer,
        )

    def _run_task(self, task: Task, prompt: str) -> Task:
        conversation: LocalConversation | None = task.conversation
        if conversation is None:
            raise RuntimeError(f"Task '{task.id}' has no conversation to run.")
        parent = self.parent_conversation
        sender = getattr(getattr(parent, "_visualizer", None), "_name", None)
        self._running[task.id] = conversation
        try:
            if self._stopping.is_set():
                raise RuntimeError("the parent conversation is closing")
            conversation.send_message(prompt, sender=sender)
            run_until_settled(task.id, conversation, self._confirmation_handler)
            if conversation.state.execution_status is ConversationExecutionStatus.FINISHED:
                task.set_result(get_agent_final_response(conversation.state.events))
            else:
                task.set_error(stop_detail(conversation))
        except Exception as exc:
            logger.warning("task %s failed: %s", task.id, exc, exc_info=True)
            task.set_error(str(exc))
        finally:
            self._running.pop(task.id, None)
            self._update_parent_metrics(parent, task)
            self._evict_task(task)
        return task

    def _update_parent_metrics(self, parent: LocalConversation, task: Task) -> None:
        """Count the task's cost in the parent's stats (replaced, not added: a resumed task's
        metrics already hold its earlier runs)."""
        if task.conversation is None:
            return
        combined = task.conversation.conversation_stats.get_combined_metrics()
        parent.conversation_stats.usage_to_metrics[f"task:{task.id}"] = combined
        parent.state.notify_stats_changed()

    def _evict_task(self, task: Task) -> None:
        if task.conversation is not None:
            task.conversation.close()
        with self._tasks_lock:
            self._tasks[task.id] = task.model_copy(update={"conversation": None})

    # --- the parent's controls -----------------------------------------------------------

    def pause(self) -> None:
        """Pause the running tasks' sub-agents (the parent was paused)."""
        for conversation in list(self._running.values()):
            conversation.pause()

    def interrupt(self) -> None:
        """Stop the running tasks' sub-agents now (the parent was interrupted)."""
        for conversation in list(self._running.values()):
            conversation.interrupt()

    def close(self) -> None:
        """Stop running tasks, forget them, and remove the temporary folder if one was made."""
        self._stopping.set()
        self.interrupt()
        if self._temporary_dir and self._persistence_dir is not None:
            shutil.rmtree(self._persistence_dir, ignore_errors=True)
        with self._tasks_lock:
            self._tasks.clear()
