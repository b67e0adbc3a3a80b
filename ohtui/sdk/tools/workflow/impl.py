"""WorkflowContext (the `wf` a workflow script gets) and WorkflowExecutor.

Every sub-agent a workflow starts is a task of a TaskManager attached to the parent, so it
runs within the parent's limits like any task (see ohtui.sdk.subagent.spawn) and its cost
counts in the parent's stats.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.task.manager import TaskManager
from ohtui.sdk.tools.workflow.definition import WorkflowAction, WorkflowObservation
from ohtui.sdk.tools.workflow.script import WorkflowScriptError, execute_workflow_script

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation

logger = logging.getLogger(__name__)

MAX_REDUCE_INPUT_CHARS: Final[int] = 12_000
TRUNCATED: Final[str] = "\n... [the rest of the workflow's results was cut to fit]"

__all__ = ["WorkflowContext", "WorkflowExecutor", "WorkflowScriptError"]


class WorkflowContext:
    """What a workflow script can do: run sub-agents, alone, over items, or as a reducer."""

    def __init__(
        self,
        parent_conversation: LocalConversation,
        max_concurrency: int,
        manager: TaskManager | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self._max_concurrency = max_concurrency
        self._parent_conversation = parent_conversation
        if manager is None:
            manager = TaskManager()
            manager.attach_parent(parent_conversation)
        self._manager = manager
        self._semaphore: asyncio.Semaphore | None = None
        self._closed = False

    def _shared_semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:  # made inside the script's event loop
            self._semaphore = asyncio.Semaphore(self._max_concurrency)
        return self._semaphore

    async def _run(self, prompt: str, subagent_type: str, description: str | None) -> str:
        if self._closed:
            raise WorkflowScriptError("this workflow has ended")
        task = await asyncio.to_thread(
            self._manager.start_task,
            prompt=prompt,
            subagent_type=subagent_type,
            description=description,
            conversation=self._parent_conversation,
        )
        if task.error:
            raise RuntimeError(task.error)
        return task.result or ""

    async def run_agent(
        self, prompt: str, subagent_type: str = "general-purpose", description: str | None = None
    ) -> str:
        """Run one sub-agent on `prompt` and return its final answer."""
        async with self._shared_semaphore():
            return await self._run(str(prompt), subagent_type, description)

    async def map_agents(
        self,
        items: Sequence[Any],
        prompt: Callable[[Any], str] | str,
        subagent_type: str = "general-purpose",
        max_concurrency: int | None = None,
        description: Callable[[Any], str] | str | None = None,
    ) -> list[str]:
        """Run one sub-agent per item (`prompt` a function of the item, or a text where
        `{item}` stands for it) and return their answers in the items' order. If any fails,
        an ExceptionGroup holds every failure."""
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        semaphore = (
            asyncio.Semaphore(min(max_concurrency, self._max_concurrency))
            if max_concurrency is not None
            else self._shared_semaphore()
        )

        async def one(index: int, item: Any) -> str:
            text = _render(prompt, item)
            label = _render(description, item) if description is not None else None
            async with semaphore:
                try:
                    return await self._run(text, subagent_type, label)
                except Exception as exc:
                    raise RuntimeError(f"[item {index + 1}] {exc}") from exc

        outcomes = await asyncio.gather(
            *(one(i, item) for i, item in enumerate(items)), return_exceptions=True
        )
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        if failures:
            raise ExceptionGroup(
                "map_agents: one or more sub-agents failed",
                [f if isinstance(f, Exception) else RuntimeError(str(f)) for f in failures],
            )
        return [str(o) for o in outcomes]

    async def reduce_agent(
        self,
        items: Any,
        prompt: str,
        subagent_type: str = "general-purpose",
        description: str | None = None,
    ) -> str:
        """Run one sub-agent on `prompt` followed by `items` (as JSON, cut to fit)."""
        return await self.run_agent(
            f"{prompt}\n\nInput:\n{_as_input(items)}", subagent_type, description
        )

    async def pipeline(self, items: Sequence[Any], *stages: Callable[[Any], Any]) -> list[Any]:
        """Pass each item through every stage in turn, each item on its own (no waiting for
        the others between stages); an item whose stage fails becomes None."""
        if not stages:
            raise ValueError("pipeline requires at least one stage")

        async def chain(index: int, item: Any) -> Any:
            value = item
            try:
                for stage in stages:
                    result = stage(value)
                    value = await result if inspect.isawaitable(result) else result
            except Exception as exc:  # that item is dropped; the others go on
                logger.warning(
                    "workflow pipeline: item %d failed: %s", index + 1, exc, exc_info=True
                )
                return None
            return value

        return list(await asyncio.gather(*(chain(i, item) for i, item in enumerate(items))))

    def flatten(self, values: list[Any]) -> list[Any]:
        """One level of nested lists made flat."""
        flat: list[Any] = []
        for value in values:
            if isinstance(value, list):
                flat.extend(value)
            else:
                flat.append(value)
        return flat

    def pause(self) -> None:
        """Pause the sub-agents at work."""
        self._manager.pause()

    def interrupt(self) -> None:
        """Stop the sub-agents at work now."""
        self._manager.interrupt()

    def close(self) -> None:
        """End the workflow: no more sub-agents start; their temporary files go."""
        if not self._closed:
            self._closed = True
            self._manager.close()


def _render(template: Callable[[Any], str] | str, item: Any) -> str:
    if callable(template):
        return str(template(item))
    # Plain replacement: str.format would reach attributes inside its braces.
    return template.replace("{item}", item if isinstance(item, str) else _json(item))


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _as_input(value: Any) -> str:
    """The reducer's input: JSON, whole items dropped from the end until it fits."""
    if not isinstance(value, list | dict):
        text = value if isinstance(value, str) else _json(value)
        return (
            text
            if len(text) <= MAX_REDUCE_INPUT_CHARS
            else text[:MAX_REDUCE_INPUT_CHARS] + TRUNCATED
        )
    entries = list(value.items()) if isinstance(value, dict) else list(value)

    def render(kept: list[Any]) -> str:
        body = json.dumps(dict(kept) if isinstance(value, dict) else kept, indent=2, default=str)
        dropped = len(entries) - len(kept)
        return body if not dropped else f"{body}\n... [{dropped} of {len(entries)} items left out]"

    kept = list(entries)
    while len(kept) > 1 and len(render(kept)) > MAX_REDUCE_INPUT_CHARS:
        kept.pop()
    text = render(kept)
    return (
        text if len(text) <= MAX_REDUCE_INPUT_CHARS else text[:MAX_REDUCE_INPUT_CHARS] + TRUNCATED
    )


class WorkflowExecutor(ToolExecutor[WorkflowAction, WorkflowObservation]):
    """Runs a workflow script to its end and reports what its `main` returned."""

    def __init__(self) -> None:
        self._running: list[WorkflowContext] = []

    def __call__(
        self, action: WorkflowAction, conversation: LocalConversation | None = None
    ) -> WorkflowObservation:
        """Run the script; any failure is an error observation saying what went wrong."""
        if conversation is None:
            return WorkflowObservation.from_text(
                text="The workflow tool runs only within a local conversation.",
                name=action.name,
                status="error",
                is_error=True,
            )
        context = WorkflowContext(conversation, action.max_concurrency)
        self._running.append(context)
        try:
            result = execute_workflow_script(action.script, context)
        except Exception as exc:  # the script's own failure, for the model to fix
            logger.warning("workflow '%s' failed: %s", action.name, exc, exc_info=True)
            return WorkflowObservation.from_text(
                text=_describe(exc), name=action.name, status="error", is_error=True
            )
        finally:
            self._running.remove(context)
            context.close()
        return WorkflowObservation.from_text(text=str(result), name=action.name, status="completed")

    def pause(self) -> None:
        """Pause the sub-agents of the running workflows."""
        for context in list(self._running):
            context.pause()

    def interrupt(self) -> None:
        """Stop the sub-agents of the running workflows now."""
        for context in list(self._running):
            context.interrupt()

    def close(self) -> None:
        """Stop the running workflows."""
        for context in list(self._running):
            context.close()


def _describe(error: Exception) -> str:
    if isinstance(error, ExceptionGroup):
        lines = "\n".join(f"  [{i}] {e}" for i, e in enumerate(error.exceptions, start=1))
        return f"{error.args[0]}:\n{lines}"
    return str(error)
