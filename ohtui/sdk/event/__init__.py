"""The typed, immutable events a conversation is made of."""

from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.event.checkpoint import CheckpointEvent, CheckpointRestoreEvent, FileChangeRecord
from ohtui.sdk.event.condenser import Condensation, CondensationRequest, CondensationSummaryEvent
from ohtui.sdk.event.conversation_error import ConversationErrorEvent
from ohtui.sdk.event.conversation_state import ConversationStateUpdateEvent
from ohtui.sdk.event.hook import HookExecutionEvent
from ohtui.sdk.event.llm_completion_log import LLMCompletionLogEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import (
    AgentErrorEvent,
    ObservationBaseEvent,
    ObservationEvent,
    UserRejectObservation,
)
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent
from ohtui.sdk.event.token import TokenEvent
from ohtui.sdk.event.types import EventID, SourceType, ToolCallID
from ohtui.sdk.event.user_action import InterruptEvent, PauseEvent

__all__ = [
    "ActionEvent",
    "AgentErrorEvent",
    "CheckpointEvent",
    "CheckpointRestoreEvent",
    "Condensation",
    "CondensationRequest",
    "CondensationSummaryEvent",
    "ConversationErrorEvent",
    "ConversationStateUpdateEvent",
    "Event",
    "EventID",
    "FileChangeRecord",
    "HookExecutionEvent",
    "InterruptEvent",
    "LLMCompletionLogEvent",
    "LLMConvertibleEvent",
    "MessageEvent",
    "ObservationBaseEvent",
    "ObservationEvent",
    "PauseEvent",
    "SourceType",
    "SystemPromptEvent",
    "TokenEvent",
    "ToolCallID",
    "UserRejectObservation",
]
