"""ohtui.sdk: our implementation of the OpenHands conversation API.

A library on its own: `from ohtui.sdk import LLM, Agent, Conversation, Tool` works in a
script with no terminal UI. litellm is imported only when the first LLM call is made.
"""

from typing import TYPE_CHECKING

from ohtui.sdk.agent import Agent, AgentBase
from ohtui.sdk.context import AgentContext, LLMSummarizingCondenser
from ohtui.sdk.context.conversation_manager import (
    AfterInvocationEvent,
    BeforeModelCallEvent,
    ContextWindowOverflowException,
    ConversationManager,
    HookProvider,
    HookRegistry,
    NullConversationManager,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from ohtui.sdk.context.skills.skill import KeywordTrigger, Skill
from ohtui.sdk.conversation import (
    BaseConversation,
    CheckpointError,
    Cipher,
    Conversation,
    ConversationExecutionStatus,
    ConversationLockedError,
    ConversationNotFoundError,
    ConversationReadOnlyError,
    ConversationRunError,
    ConversationState,
    ConversationStats,
    ConversationVisualizerBase,
    DefaultConversationVisualizer,
    EventLog,
    EventsListBase,
    LocalConversation,
    PersistenceError,
    SecretRegistry,
    StorageReadOnlyError,
    StuckDetectionThresholds,
    StuckDetector,
    get_agent_final_response,
)
from ohtui.sdk.conversation.impl.remote_errors import (
    RemoteAuthenticationError,
    RemoteConnectionError,
    RemoteServerError,
    WebSocketConnectionError,
)
from ohtui.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    CheckpointEvent,
    CheckpointRestoreEvent,
    Condensation,
    CondensationRequest,
    CondensationSummaryEvent,
    ConversationErrorEvent,
    ConversationStateUpdateEvent,
    Event,
    HookExecutionEvent,
    LLMCompletionLogEvent,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationBaseEvent,
    ObservationEvent,
    PauseEvent,
    SystemPromptEvent,
    TokenEvent,
    UserRejectObservation,
)
from ohtui.sdk.llm import (
    LLM,
    ImageContent,
    LLMError,
    LLMRegistry,
    LLMStreamChunk,
    Message,
    MessageToolCall,
    Metrics,
    RegistryEvent,
    TextContent,
)
from ohtui.sdk.logger import get_logger
from ohtui.sdk.plugins.types import PluginSource, ResolvedPluginSource
from ohtui.sdk.security import (
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
    ConfirmationPolicyBase,
    ConfirmRisky,
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    NeverConfirm,
    SecurityAnalyzerBase,
    SecurityRisk,
)
from ohtui.sdk.tool import (
    Action,
    Observation,
    Tool,
    ToolAnnotations,
    ToolDefinition,
    ToolExecutor,
    list_registered_tools,
    register_tool,
)
from ohtui.sdk.utils.lazy import lazy_exports
from ohtui.sdk.workspace import LocalWorkspace, RemoteWorkspace, WorkspaceError

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.remote_conversation import RemoteConversation
    from ohtui.sdk.conversation.impl.remote_events import RemoteEventsList
    from ohtui.sdk.conversation.impl.remote_state import RemoteState
    from ohtui.sdk.hooks import HookConfig
    from ohtui.sdk.llm.llm_profile_store import LLMProfileStore
    from ohtui.sdk.security import PatternSecurityAnalyzer, PolicyRailSecurityAnalyzer

# Loaded on first use, to keep `import ohtui.sdk` light: the command-reading analyzers, the
# remote conversation (its socket, REST and wire modules), and hooks.
__getattr__ = lazy_exports(
    __name__,
    {
        "HookConfig": "ohtui.sdk.hooks",
        "LLMProfileStore": "ohtui.sdk.llm.llm_profile_store",
        "PatternSecurityAnalyzer": "ohtui.sdk.security",
        "PolicyRailSecurityAnalyzer": "ohtui.sdk.security",
        "RemoteConversation": "ohtui.sdk.conversation.impl.remote_conversation",
        "RemoteEventsList": "ohtui.sdk.conversation.impl.remote_events",
        "RemoteState": "ohtui.sdk.conversation.impl.remote_state",
    },
)

__version__ = "0.1.0"

__all__ = [
    "LLM",
    "Action",
    "ActionEvent",
    "AfterInvocationEvent",
    "Agent",
    "AgentBase",
    "AgentContext",
    "AgentErrorEvent",
    "AlwaysConfirm",
    "ApprovalRule",
    "ApprovalRulesPolicy",
    "BaseConversation",
    "BeforeModelCallEvent",
    "CheckpointError",
    "CheckpointEvent",
    "CheckpointRestoreEvent",
    "Cipher",
    "Condensation",
    "CondensationRequest",
    "CondensationSummaryEvent",
    "ConfirmRisky",
    "ConfirmationPolicyBase",
    "ContextWindowOverflowException",
    "Conversation",
    "ConversationErrorEvent",
    "ConversationExecutionStatus",
    "ConversationLockedError",
    "ConversationManager",
    "ConversationNotFoundError",
    "ConversationReadOnlyError",
    "ConversationRunError",
    "ConversationState",
    "ConversationStateUpdateEvent",
    "ConversationStats",
    "ConversationVisualizerBase",
    "DefaultConversationVisualizer",
    "EnsembleSecurityAnalyzer",
    "Event",
    "EventLog",
    "EventsListBase",
    "HookConfig",
    "HookExecutionEvent",
    "HookProvider",
    "HookRegistry",
    "ImageContent",
    "KeywordTrigger",
    "LLMCompletionLogEvent",
    "LLMConvertibleEvent",
    "LLMError",
    "LLMProfileStore",
    "LLMRegistry",
    "LLMSecurityAnalyzer",
    "LLMStreamChunk",
    "LLMSummarizingCondenser",
    "LocalConversation",
    "LocalWorkspace",
    "Message",
    "MessageEvent",
    "MessageToolCall",
    "Metrics",
    "NeverConfirm",
    "NullConversationManager",
    "Observation",
    "ObservationBaseEvent",
    "ObservationEvent",
    "PatternSecurityAnalyzer",
    "PauseEvent",
    "PersistenceError",
    "PluginSource",
    "PolicyRailSecurityAnalyzer",
    "RegistryEvent",
    "RemoteAuthenticationError",
    "RemoteConnectionError",
    "RemoteConversation",
    "RemoteEventsList",
    "RemoteServerError",
    "RemoteState",
    "RemoteWorkspace",
    "ResolvedPluginSource",
    "SecretRegistry",
    "SecurityAnalyzerBase",
    "SecurityRisk",
    "Skill",
    "SlidingWindowConversationManager",
    "StorageReadOnlyError",
    "StuckDetectionThresholds",
    "StuckDetector",
    "SummarizingConversationManager",
    "SystemPromptEvent",
    "TextContent",
    "TokenEvent",
    "Tool",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolExecutor",
    "UserRejectObservation",
    "WebSocketConnectionError",
    "WorkspaceError",
    "get_agent_final_response",
    "get_logger",
    "list_registered_tools",
    "register_tool",
]
