"""Agent: the standard tool-calling agent, one LLM call per step.

A little over 600 lines, on purpose: a step is one pipeline (ask the model, read its tool
calls into actions, apply the confirmation policy, run them between the hooks), whose
methods share the agent's state and read best in order. What stands alone lives apart:
the chat history (`history`), condensation (`condensation`), the prompts (`prompts`),
the terminal's vouching (`vouching`) and the contract with the conversation
(`conversation_contract`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import Field, PrivateAttr, model_validator

from ohtui.sdk.agent.base import AgentBase, EventCallback
from ohtui.sdk.agent.condensation import CondensedHistory, overflow_error
from ohtui.sdk.agent.conversation_contract import (
    EMPTY_REPLY_SENDER,
    ContextUsage,
    ConversationExecutionStatus,
)
from ohtui.sdk.agent.history import ChatHistory
from ohtui.sdk.agent.prompts import render_secrets_context, render_system_prompt
from ohtui.sdk.agent.tool_batch import ResourceLocks, run_concurrently
from ohtui.sdk.agent.vouching import unvouched
from ohtui.sdk.context.condenser.base import NoCondensationAvailableException
from ohtui.sdk.context.conversation_manager.config import ManagerField
from ohtui.sdk.context.conversation_manager.view import ManagedView
from ohtui.sdk.context.memory import MEMORY_GUIDANCE, render_memory_context
from ohtui.sdk.context.view import View
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import (
    AgentErrorEvent,
    ObservationEvent,
    UserRejectObservation,
)
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent
from ohtui.sdk.llm.exceptions import LLMContextWindowExceedError, LLMNoResponseError
from ohtui.sdk.llm.llm import LLM, LLMResponse
from ohtui.sdk.llm.message import Message, MessageToolCall, TextContent
from ohtui.sdk.llm.streaming import TokenCallbackType
from ohtui.sdk.mcp.availability import missing_mcp_tool
from ohtui.sdk.security.undo import changes_workspace
from ohtui.sdk.tool.context import running_action_id
from ohtui.sdk.tool.risk import SecurityRisk
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolArgumentError, ToolDefinition, tool_name_of
from ohtui.sdk.utils.valid_text import valid_data

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.hooks.runner import HookManager

logger = logging.getLogger(__name__)

NEVER_WAIT = frozenset({"finish", "think"})
"""Tools whose batches run without confirmation: they change nothing."""
SIDE_QUESTION = (
    "<QUESTION>\n{question}\n</QUESTION>\n<IMPORTANT>\nThis is a side question about the work "
    "so far. Answer it in plain text from what you already know; do not make any tool call."
    "\n</IMPORTANT>"
)
"""How `ask` puts a side question to the model."""
EMPTY_REPLY = (
    "Your last response did not include a function call or a message. Call a tool to go on, "
    "or answer in words."
)


class Agent(AgentBase):
    """Calls the LLM with the history and its tools, then runs the tool calls it returns."""

    conversation_manager: ManagerField = Field(
        default=None,
        description="A Strands conversation manager keeping the messages sent within the "
        "context window (instead of a condenser).",
    )

    _history: CondensedHistory = PrivateAttr(default_factory=CondensedHistory)
    _view: ManagedView | None = PrivateAttr(default=None)
    _system_message: dict[str, Any] | None = PrivateAttr(default=None)
    _static_prompt: str = PrivateAttr(default="")
    _dynamic_context: str | None = PrivateAttr(default=None)
    _tool_schemas: dict[bool, list[dict[str, Any]]] = PrivateAttr(default_factory=dict)
    _resource_locks: ResourceLocks = PrivateAttr(default_factory=ResourceLocks)

    @model_validator(mode="after")
    def _one_context_strategy(self) -> Agent:
        if self.conversation_manager is not None and getattr(self, "condenser", None) is not None:
            raise ValueError(
                "An agent takes either a condenser or a conversation_manager, not both: "
                "drop one of them (see the README on when to choose which)."
            )
        return self

    @property
    def system_message(self) -> str:
        """The system prompt (after `init_state`)."""
        if self._system_message is None:
            raise RuntimeError("the system prompt is built by init_state() first")
        return str(self._system_message["content"])

    def init_state(self, state: ConversationState, on_event: EventCallback) -> None:
        """Resolve the tools, build the prompt, and record it if the conversation is new."""
        super().init_state(state, on_event)
        tools = self.tools_map
        if self._system_message is None:
            self._tool_schemas = _schemas(tools)
            summaries = [(t.name, _first_line(t.description)) for t in tools.values()]
            prompt = self._render_static(state.workspace.working_dir, summaries)
            dynamic = self.get_dynamic_context(state)
            self._static_prompt = prompt
            self._dynamic_context = dynamic
            content = f"{prompt}\n\n{dynamic}" if dynamic else prompt
            self._system_message = {"role": "system", "content": content}
        if len(state.events) == 0:  # (the log: a system prompt once)
            on_event(
                SystemPromptEvent(
                    system_prompt=TextContent(text=self._static_prompt),
                    tools=list(tools.values()),
                    dynamic_context=(
                        TextContent(text=self._dynamic_context) if self._dynamic_context else None
                    ),
                )
            )

    @property
    def static_system_message(self) -> str:
        """The system prompt without the conversation's own context (secrets, memory).

        Before a conversation starts, its workspace is not known yet and the tools are listed
        by name only.
        """
        if self._system_message is not None:
            return self._static_prompt
        names = [spec.name for spec in self.tools] + [
            tool_name_of(name) for name in self.include_default_tools
        ]
        return self._render_static("(set when a conversation starts)", [(n, "") for n in names])

    def _render_static(self, working_dir: str, summaries: list[tuple[str, str]]) -> str:
        context = self.agent_context
        suffix = context.system_message_extension() if context else None
        if context is not None and context.load_memory:
            suffix = f"{MEMORY_GUIDANCE}\n\n{suffix}" if suffix else MEMORY_GUIDANCE
        return render_system_prompt(
            working_dir,
            summaries,
            suffix,
            kwargs=self.system_prompt_kwargs,
            security_policy=self.read_security_policy(),
            filename=self.system_prompt_filename,
        )

    def get_dynamic_context(self, state: ConversationState) -> str | None:
        """The part of the system prompt that is this conversation's own: the secrets its
        commands may use, by name and description (never a value), and the persistent memory
        read when it started. None when there is none.

        It follows the static prompt, so the shared part stays cacheable by the provider.
        """
        registry = state.secret_registry
        secrets = render_secrets_context(registry.get_secret_infos())
        memory = self.agent_context.memory_context if self.agent_context else None
        parts = [
            registry.mask_secrets_in_output(secrets) if secrets else None,
            registry.mask_secrets_in_output(render_memory_context(memory)) if memory else None,
        ]
        return "\n\n".join(p for p in parts if p) or None

    def step(
        self,
        conversation: LocalConversation,
        on_event: EventCallback,
        on_token: TokenCallbackType | None = None,
    ) -> None:
        """Run pending actions if any; otherwise ask the LLM once and act on its answer."""
        state = conversation.state
        cancel = conversation.cancel_requested
        pending = state.get_unmatched_actions(state.active_branch())
        if pending:  # the user confirmed them
            self._execute(conversation, pending, on_event, cancel, confirmed=True)
            return
        if self._system_message is None:
            raise RuntimeError("step() before init_state()")
        if self.sync_mcp_tools():  # an MCP server was turned on or off: offer what is there
            self._tool_schemas = _schemas(self.tools_map)
        tools = self._offered_tools(state)
        self._condense_if_wanted(state, on_event)
        try:
            if self.conversation_manager is not None:
                history = self._history.messages(state.active_branch(), skip=state.blocked_messages)
                response = self._managed_completion(state, history, tools, on_token, cancel)
            else:
                try:
                    response = self._ask_model(state, tools, on_token, cancel)
                except LLMContextWindowExceedError as exc:
                    response = self._retry_condensed(state, exc, tools, on_event, on_token, cancel)
        finally:
            state.notify_stats_changed()
        if not response.message.tool_calls:
            on_event(
                MessageEvent(
                    source="agent", llm_message=response.message, llm_response_id=response.id
                )
            )
            if not response.message.text.strip():  # nothing said, nothing done: not an answer
                on_event(MessageEvent.from_environment(EMPTY_REPLY, EMPTY_REPLY_SENDER))
                return
            state.execution_status = ConversationExecutionStatus.FINISHED
            return
        actions = self._actions_from(response, state, on_event, conversation.undoable)
        runnable = self._apply_policy(state, actions, on_event, conversation.undoable)
        if runnable is not None:
            self._execute(conversation, runnable, on_event, cancel)

    def _messages(self, state: ConversationState) -> list[dict[str, Any]]:
        """What the model gets: the system prompt, then the condensed view as messages."""
        assert self._system_message is not None
        history = self._history.messages(state.active_branch(), skip=state.blocked_messages)
        return [self._system_message, *history]

    def _ask_model(
        self,
        state: ConversationState,
        tools: list[dict[str, Any]],
        on_token: TokenCallbackType | None,
        cancel: threading.Event | None,
        messages: list[dict[str, Any]] | None = None,
    ) -> LLMResponse:
        """One call with the current view (or `messages`); records how full the context is
        after it."""
        messages = self._messages(state) if messages is None else messages
        response = self.llm.completion(messages, tools=tools, on_token=on_token, cancel=cancel)
        usage = response.usage
        tokens = usage.prompt_tokens + usage.completion_tokens if usage else 0
        if not usage or not usage.prompt_tokens:  # the server did not say: count offline
            reply = response.message.to_chat_dict()
            tokens = self.llm.get_token_count([*messages, reply], tools=tools or None)
        window = self.llm.context_window
        state.stats.context = ContextUsage(tokens=tokens, window=window, model=self.llm.model)
        return response

    def _condense_if_wanted(self, state: ConversationState, on_event: EventCallback) -> None:
        """Let the condenser condense the view before the call (a pending request, a
        threshold passed); when it finds nothing to condense, the view goes as it is."""
        try:
            self._history.maybe_condense(
                self.condenser, state.active_branch(), self.llm, on_event, state.blocked_messages
            )
        except NoCondensationAvailableException as exc:
            logger.info("no condensation available, sending the whole view: %s", exc)

    def _retry_condensed(
        self,
        state: ConversationState,
        exc: LLMContextWindowExceedError,
        tools: list[dict[str, Any]],
        on_event: EventCallback,
        on_token: TokenCallbackType | None,
        cancel: threading.Event | None,
    ) -> LLMResponse:
        """After a context-window error: condense once, then ask again (once)."""
        condenser = self.condenser
        if condenser is None or not condenser.handles_condensation_requests():
            raise overflow_error(
                exc,
                self.llm,
                "This agent has no condenser to shorten it: configure one (e.g. "
                "Agent(condenser=LLMSummarizingCondenser(llm=...))), or start a new "
                "conversation.",
            ) from exc
        try:
            self._history.condense_on_request(
                condenser, state.active_branch(), self.llm, on_event, state.blocked_messages
            )
        except NoCondensationAvailableException as none:
            raise overflow_error(
                exc,
                self.llm,
                f"Condensing could not shorten it ({none}); start a new conversation.",
            ) from exc
        try:
            return self._ask_model(state, tools, on_token, cancel)
        except LLMContextWindowExceedError as again:
            raise overflow_error(
                again,
                self.llm,
                "It still does not fit after condensing the history: start a new "
                "conversation, or use a model with a larger window.",
            ) from again

    def condense_now(
        self, state: ConversationState, on_event: EventCallback, focus: str | None = None
    ) -> Condensation:
        """Record a CondensationRequest and condense at once (see `conversation.condense`).

        ValueError without a condenser that handles requests; NoCondensationAvailableException
        when there is nothing to condense.
        """
        condensation = self._history.condense_on_request(
            self.condenser, state.active_branch(), self.llm, on_event, state.blocked_messages, focus
        )
        if self._system_message is not None:  # the context is smaller now: count it again
            tokens = self.llm.get_token_count(
                self._messages(state), tools=self._offered_tools(state) or None
            )
            window = self.llm.context_window
            state.stats.context = ContextUsage(tokens=tokens, window=window, model=self.llm.model)
        return condensation

    def _managed_completion(
        self,
        state: ConversationState,
        history: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_token: TokenCallbackType | None,
        cancel: threading.Event | None,
    ) -> LLMResponse:
        """Ask the model with the conversation manager's view of `history` (the chat
        messages of all events): hooks first, overflows reduced and retried."""
        assert self.conversation_manager is not None and self._system_message is not None
        if self._view is None:
            self._view = ManagedView(self.conversation_manager, self.llm)
            self._view.restore(state)  # a resumed conversation: what was removed stays so
        view = self._view
        view.llm, view.cancel = self.llm, cancel  # the conversation may have switched models
        view.sync(history)

        def call(messages: list[dict[str, Any]]) -> LLMResponse:
            return self._ask_model(state, tools, on_token, cancel, messages)

        return view.complete(state, self._system_message, call, tools)

    def end_run(self, conversation: LocalConversation) -> None:
        """After every run: the conversation manager applies its strategy."""
        if self._view is not None:
            self._view.end_run(conversation.state)

    def close(self) -> None:
        """Close the tools and forget the managed view (the next conversation has its own)."""
        super().close()
        self._view = None

    def forget_conversation(self) -> None:
        """Drop the last conversation's history, prompt and view: a new one starts afresh."""
        super().forget_conversation()
        self._view = None
        self._history = CondensedHistory()
        self._system_message = None
        self._static_prompt, self._dynamic_context = "", None
        self._tool_schemas = {}

    def _apply_policy(
        self,
        state: ConversationState,
        actions: list[ActionEvent],
        on_event: EventCallback,
        undoable: Callable[[str], bool] = lambda tool_name: False,
    ) -> list[ActionEvent] | None:
        """Reject denied actions; return the rest, or None when the batch must wait.

        The whole batch waits when any action needs the user's confirmation, or when the
        terminal cannot vouch for a command that would run unasked and is not undoable;
        `finish` and `think` never need it.
        """
        policy = state.confirmation_policy
        working_dir = state.workspace.working_dir
        runnable: list[ActionEvent] = []
        waits = False
        for action in actions:
            if action.tool_name in NEVER_WAIT:
                runnable.append(action)
                continue
            decision = policy.decide(action, working_dir)
            if decision.verdict == "deny":
                on_event(
                    UserRejectObservation(
                        action_id=action.id,
                        tool_name=action.tool_name,
                        tool_call_id=action.tool_call_id,
                        rejection_reason=decision.reason,
                    )
                )
                continue
            runnable.append(action)
            waits = waits or decision.verdict == "confirm"
            if decision.verdict == "allow" and not waits and not undoable(action.tool_name):
                waits = unvouched(self.tools_map, state, action) is not None
        if waits:
            state.execution_status = ConversationExecutionStatus.WAITING_FOR_CONFIRMATION
            return None
        return runnable

    def _actions_from(
        self,
        response: LLMResponse,
        state: ConversationState,
        on_event: EventCallback,
        undoable: Callable[[str], bool] = lambda tool_name: False,
    ) -> list[ActionEvent]:
        """Record one ActionEvent per tool call (rated by the conversation's analyzer, told
        whether the tool's action would be confined and undoable), then an AgentErrorEvent
        for each invalid one; return the valid ones."""
        analyzer = state.security_analyzer
        message = response.message
        events: list[ActionEvent] = []
        errors: list[AgentErrorEvent] = []
        for index, call in enumerate(message.tool_calls or []):
            action, risk, summary, error = self._parse_call(call, state)
            event = ActionEvent(
                thought=list(message.content) if index == 0 else [],
                reasoning_content=message.reasoning_content if index == 0 else None,
                thinking_blocks=list(message.thinking_blocks) if index == 0 else [],
                responses_reasoning_item=message.responses_reasoning_item if index == 0 else None,
                action=action,
                tool_name=call.name,
                tool_call_id=call.id,
                tool_call=call,
                llm_response_id=response.id,
                security_risk=risk,
                summary=summary,
            )
            if analyzer is None:
                # Without an analyzer the model's own rating means nothing.
                event = event.model_copy(update={"security_risk": SecurityRisk.UNKNOWN})
            elif action is not None:
                assessment = analyzer.with_undo(undoable(call.name)).assess(event)
                risk, reason = assessment.risk, assessment.explanation
                tool = self.tools_map.get(call.name)
                if risk is SecurityRisk.UNKNOWN and tool is not None and tool.is_read_only:
                    risk, reason = SecurityRisk.LOW, "a read-only tool"  # never asked to rate
                event = event.model_copy(
                    update={"security_risk": risk, "security_risk_reason": reason}
                )
            if not undoable(call.name):
                event = self._with_vouch(state, event)
            events.append(event)
            if error is not None:
                errors.append(
                    AgentErrorEvent(error=error, tool_name=call.name, tool_call_id=call.id)
                )
        for event in events:
            on_event(event)
        for error_event in errors:
            on_event(error_event)
        return [e for e in events if e.action is not None]

    def _with_vouch(self, state: ConversationState, event: ActionEvent) -> ActionEvent:
        """The event, with why it must wait when the terminal cannot vouch for a command
        the policy allows (a LOW rating becomes MEDIUM: the live shell may run other code)."""
        reason = unvouched(self.tools_map, state, event) if event.action is not None else None
        if reason is None:
            return event
        risk = SecurityRisk.MEDIUM if event.security_risk is SecurityRisk.LOW else None
        return event.model_copy(
            update={"security_risk": risk or event.security_risk, "security_risk_reason": reason}
        )

    def _parse_call(self, call: MessageToolCall, state: ConversationState) -> _ParsedCall:
        """Validate one tool call into its action, or the error to tell the model."""
        tool = self.tools_map.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools_map))
            gone = missing_mcp_tool(call.name, state.active_branch(), self.mcp)
            return _ParsedCall(
                error=f"There is no tool named '{call.name}'{gone}. Use one of: {known}."
            )
        try:
            # A "\ud800" escape decodes to a lone surrogate: made valid before any tool sees it.
            arguments = valid_data(json.loads(call.arguments or "{}"))
        except json.JSONDecodeError as exc:
            return _ParsedCall(
                error=f"The arguments of your '{call.name}' call are not valid JSON ({exc.msg} at "
                f"character {exc.pos}). Send one JSON object matching the tool's parameters."
            )
        if not isinstance(arguments, dict):
            return _ParsedCall(
                error=f"The arguments of your '{call.name}' call must be a JSON object, not "
                f"{type(arguments).__name__}."
            )
        risk = _risk_of(arguments.pop("security_risk", None))
        # Every tool offers an optional `summary`, unless it has a parameter of that name.
        own_summary = "summary" in tool.action_type.model_fields
        given = arguments.get("summary") if own_summary else arguments.pop("summary", None)
        summary = (given.strip() or None) if isinstance(given, str) else None
        try:
            return _ParsedCall(tool.action_from_arguments(arguments), risk, summary)
        except ToolArgumentError as exc:
            return _ParsedCall(None, risk, summary, str(exc))

    def _execute(
        self,
        conversation: LocalConversation,
        actions: list[ActionEvent],
        on_event: EventCallback,
        cancel: threading.Event | None = None,
        *,
        confirmed: bool = False,
    ) -> None:
        """Execute actions, recording an observation (or an error) for each in their order,
        with a checkpoint of the workspace before each that may change it; with a
        `tool_concurrency_limit` above 1 their tools run at the same time (tool_batch.py).

        Once `cancel` is set, the actions not started yet are recorded as rejected. When no
        checkpoint can be taken for an action that ran unasked only because it was undoable
        (not `confirmed` by the user), it and the rest wait for the user instead.
        """
        hooks: HookManager | None = getattr(conversation, "hooks", None)
        together = self.tool_concurrency_limit > 1 and len(actions) > 1
        batch: list[tuple[ActionEvent, ToolDefinition[Any, Any]]] = []
        for event in actions:
            tool, wait = self._prepare_call(conversation, event, on_event, cancel, hooks, confirmed)
            if wait:
                conversation.state.execution_status = (
                    ConversationExecutionStatus.WAITING_FOR_CONFIRMATION
                )
                return
            if tool is None:
                continue
            if together:
                batch.append((event, tool))
                continue
            token = running_action_id.set(event.id)
            try:
                outcome: Observation | Exception = tool(event.action, conversation)
            except Exception as exc:  # a failing tool must not end the run
                logger.exception("tool %s failed", event.tool_name)
                outcome = exc
            finally:
                running_action_id.reset(token)
            self._record(conversation.state, event, outcome, on_event, hooks)
        if batch:
            outcomes = run_concurrently(
                batch,
                lambda event, tool: tool(event.action, conversation),
                self.tool_concurrency_limit,
                self._resource_locks,
            )
            for (event, _), outcome in zip(batch, outcomes, strict=True):
                self._record(conversation.state, event, outcome, on_event, hooks)

    def _prepare_call(
        self,
        conversation: LocalConversation,
        event: ActionEvent,
        on_event: EventCallback,
        cancel: threading.Event | None,
        hooks: HookManager | None,
        confirmed: bool,
    ) -> tuple[ToolDefinition[Any, Any] | None, bool]:
        """The tool to run `event` with (None: it was refused, and that is recorded), and
        whether it must wait for the user after all (no checkpoint where it relied on one)."""
        state = conversation.state
        if cancel is not None and cancel.is_set():
            on_event(
                UserRejectObservation(
                    action_id=event.id,
                    tool_name=event.tool_name,
                    tool_call_id=event.tool_call_id,
                    rejection_reason="The user interrupted the agent before this action ran.",
                )
            )
            return None, False
        if event.id in state.blocked_actions:  # by a hook wired as a callback
            self._reject_blocked(state, event, state.blocked_actions[event.id], on_event)
            return None, False
        if hooks is not None and self._blocked_by_hook(hooks, state, event, on_event):
            return None, False
        tool = self.tool_for(event)
        if tool is None or event.action is None:
            on_event(
                AgentErrorEvent(
                    error=f"Tool '{event.tool_name}' is not available; the action did not run.",
                    tool_name=event.tool_name,
                    tool_call_id=event.tool_call_id,
                )
            )
            return None, False
        checkpointing = conversation.checkpointing
        if checkpointing is not None and (
            changes_workspace(event, tool.is_read_only)
            # A line shown to only read may run something else in a prepared shell.
            or unvouched(self.tools_map, state, event) is not None
        ):
            taken = checkpointing.before(event)
            if taken is None and not confirmed and _relied_on_undo(state, event):
                return None, True
        return tool, False

    def _record(
        self,
        state: ConversationState,
        event: ActionEvent,
        outcome: Observation | Exception,
        on_event: EventCallback,
        hooks: HookManager | None,
    ) -> None:
        """Record what a call gave (its observation, or its tool's failure), then run the
        PostToolUse hooks; `finish` ends the run."""
        if isinstance(outcome, Exception):
            on_event(
                AgentErrorEvent(
                    error=f"Tool '{event.tool_name}' failed: {_error_text(outcome)}",
                    tool_name=event.tool_name,
                    tool_call_id=event.tool_call_id,
                )
            )
            return
        on_event(
            ObservationEvent(
                observation=outcome,
                action_id=event.id,
                tool_name=event.tool_name,
                tool_call_id=event.tool_call_id,
            )
        )
        if hooks is not None:
            self._post_tool_hooks(hooks, event, outcome, on_event)
        if event.tool_name == "finish":
            state.execution_status = ConversationExecutionStatus.FINISHED

    @staticmethod
    def _blocked_by_hook(
        hooks: HookManager, state: ConversationState, event: ActionEvent, on_event: EventCallback
    ) -> bool:
        """Run the PreToolUse hooks; a block rejects the action, naming the hook."""
        may_run, results = hooks.run_pre_tool_use(
            event.tool_name, _tool_input(event), action_id=event.id
        )
        if may_run:
            return False
        reason = f"Blocked by {hooks.blocked_by(results)}"
        state.block_action(event.id, reason)  # saved first: the decision survives a crash
        Agent._reject_blocked(state, event, reason, on_event)
        return True

    @staticmethod
    def _reject_blocked(
        state: ConversationState, event: ActionEvent, reason: str, on_event: EventCallback
    ) -> None:
        """Record a hook's block of an action as its rejection; the block is then settled."""
        on_event(
            UserRejectObservation(
                action_id=event.id,
                tool_name=event.tool_name,
                tool_call_id=event.tool_call_id,
                rejection_reason=reason,
                rejection_source="hook",
            )
        )
        state.pop_blocked_action(event.id)

    @staticmethod
    def _post_tool_hooks(
        hooks: HookManager, event: ActionEvent, observation: Observation, on_event: EventCallback
    ) -> None:
        """Run the PostToolUse hooks; a block sends its reason to the agent as feedback."""
        results = hooks.run_post_tool_use(
            event.tool_name,
            _tool_input(event),
            observation.model_dump(mode="json"),
            action_id=event.id,
        )
        if not all(r.should_continue for r in results):
            feedback = f"Feedback on your `{event.tool_name}` call from {hooks.blocked_by(results)}"
            on_event(MessageEvent.from_environment(feedback, "post-tool-hook"))

    def ask(
        self,
        question: str,
        state: ConversationState,
        llm: LLM | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """Answer a side question from the history so far, recording nothing.

        The question goes to `llm` (default: the agent's) with the agent's tools offered, as
        in its own requests: some providers refuse a history with tool calls but no tools,
        and the same prefix can be served from the provider's prompt cache. The model is
        told not to call them; an answer without text is an LLMNoResponseError.
        """
        history = ChatHistory()
        history.update(View.from_events(state.active_branch(), skip=state.blocked_messages).events)
        system = self._system_message or {"role": "system", "content": ""}
        messages = [Message.from_llm_chat_message(m) for m in (system, *history.answered())]
        prompt = SIDE_QUESTION.format(question=question)
        messages.append(Message(role="user", content=[TextContent(text=prompt)]))
        model = llm or self.llm
        response = model.completion(
            messages=messages, tools=self._offered_tools(state) or None, cancel=cancel
        )
        if not response.message.text.strip():
            raise LLMNoResponseError(
                f"'{model.model}' answered the side question with a tool call instead of "
                "text. Ask again, perhaps more plainly.",
                model=model.model,
            )
        return response.message.text

    def _offered_tools(self, state: ConversationState) -> list[dict[str, Any]]:
        """The tool schemas sent to the model: with a risk rating when the analyzer wants one."""
        analyzer = state.security_analyzer
        return self._tool_schemas.get(analyzer is not None and analyzer.wants_model_rating, [])


class _ParsedCall(NamedTuple):
    action: Action | None = None
    risk: SecurityRisk = SecurityRisk.UNKNOWN
    summary: str | None = None
    error: str | None = None  # for the model, when the call did not validate


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _schemas(tools: dict[str, ToolDefinition[Any, Any]]) -> dict[bool, list[dict[str, Any]]]:
    """The tool schemas offered to the model, without and with the risk rating."""
    return {
        rated: [t.to_openai_tool(add_security_risk_prediction=rated) for t in tools.values()]
        for rated in (False, True)
    }


def _tool_input(event: ActionEvent) -> dict[str, Any]:
    return event.action.model_dump(exclude={"kind"}) if event.action is not None else {}


def _relied_on_undo(state: ConversationState, event: ActionEvent) -> bool:
    """Whether the action would have waited for the user had it not been undoable."""
    analyzer = state.security_analyzer
    if analyzer is None:
        return False
    risk = analyzer.with_undo(False).assess(event).risk
    if risk is event.security_risk:
        return False
    unconfined = event.model_copy(update={"security_risk": risk})
    decision = state.confirmation_policy.decide(unconfined, state.workspace.working_dir)
    return decision.verdict != "allow"


def _risk_of(value: object) -> SecurityRisk:
    try:
        return SecurityRisk(str(value).upper()) if value is not None else SecurityRisk.UNKNOWN
    except ValueError:
        return SecurityRisk.UNKNOWN


def _error_text(exc: Exception) -> str:
    """Our own errors say what happened in words; others keep their type (`KeyError: 'x'`)."""
    if type(exc).__module__.startswith("ohtui.") and str(exc):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
