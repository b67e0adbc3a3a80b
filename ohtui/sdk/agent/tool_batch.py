"""Running one step's tool calls at the same time (`Agent.tool_concurrency_limit` > 1).

Only the tools run on worker threads; recording their results stays on the step's thread,
in the order the model asked for them (the conversation's lock is held there, and the log
must read the same whichever call ended first). Calls that declare a common resource, and
calls of a tool that declares none (see `ToolDefinition.declared_resources`), run one at a
time; the others run together, at most `limit` at once.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ohtui.sdk.tool.context import running_action_id

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.tool.schema import Observation
    from ohtui.sdk.tool.tool import ToolDefinition

logger = logging.getLogger(__name__)


class ResourceLocks:
    """One lock per resource key, taken in sorted order so two calls never deadlock."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def hold(self, keys: Sequence[str]) -> Iterator[None]:
        """Hold the locks of `keys` for the duration of the block."""
        with self._guard:
            locks = [self._locks.setdefault(key, threading.Lock()) for key in sorted(set(keys))]
        for lock in locks:
            lock.acquire()
        try:
            yield
        finally:
            for lock in reversed(locks):
                lock.release()


def lock_keys(tool: ToolDefinition[Any, Any], event: ActionEvent) -> tuple[str, ...]:
    """The resources a call holds while it runs. A tool that declares nothing holds itself
    and its executor: tools sharing one executor (one shell) never run at once."""
    undeclared = (f"tool:{tool.name}", f"executor:{id(tool.executor)}")
    if event.action is None:
        return undeclared
    declared = tool.declared_resources(event.action)
    return declared.keys if declared.declared else undeclared


def run_concurrently(
    calls: Sequence[tuple[ActionEvent, ToolDefinition[Any, Any]]],
    run: Callable[[ActionEvent, ToolDefinition[Any, Any]], Observation],
    limit: int,
    locks: ResourceLocks,
) -> list[Observation | Exception]:
    """Run every call (`run(event, tool)`) on up to `limit` threads; the outcomes in the
    calls' order, a raised exception standing for its call's observation."""

    def one(event: ActionEvent, tool: ToolDefinition[Any, Any]) -> Observation | Exception:
        token = running_action_id.set(event.id)
        try:
            with locks.hold(lock_keys(tool, event)):
                return run(event, tool)
        except Exception as exc:  # reported for its call; the other calls go on
            logger.exception("tool %s failed", event.tool_name)
            return exc
        finally:
            running_action_id.reset(token)

    with ThreadPoolExecutor(max_workers=limit, thread_name_prefix="tool-call") as pool:
        # Each call gets its own copy of the context: one context cannot be entered twice.
        futures = [
            pool.submit(contextvars.copy_context().run, one, event, tool) for event, tool in calls
        ]
        return [future.result() for future in futures]
