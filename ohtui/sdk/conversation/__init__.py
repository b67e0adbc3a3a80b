"""Conversations: running an agent, its state, its event log, persistence and listing."""

# Imported for what it does on import: it gives the hooks the runner of agent hooks.
from ohtui.sdk.conversation import agent_hook  # noqa: F401
from ohtui.sdk.conversation.base import BaseConversation, ConversationStateProtocol
from ohtui.sdk.conversation.catalog import ConversationCatalog, LocalCatalog
from ohtui.sdk.conversation.conversation import Conversation
from ohtui.sdk.conversation.event_store import EventLog, EventsListBase
from ohtui.sdk.conversation.exceptions import (
    CheckpointError,
    ConversationLockedError,
    ConversationNotFoundError,
    ConversationReadOnlyError,
    ConversationRunError,
    PersistenceError,
    StorageReadOnlyError,
)
from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
from ohtui.sdk.conversation.lease import LeaseHolder
from ohtui.sdk.conversation.listing import (
    delete_conversation,
    find_conversation,
    history_tail,
    list_conversations,
    recent_events,
    rename_conversation,
    search_conversations,
)
from ohtui.sdk.conversation.response_utils import get_agent_final_response
from ohtui.sdk.conversation.saved import OpenConversationError, SavedConversations
from ohtui.sdk.conversation.secret_registry import (
    SECRET_MASK,
    LookupSecret,
    SecretRegistry,
    SecretSource,
    SecretsUnavailableWarning,
    SecretValue,
    StaticSecret,
)
from ohtui.sdk.conversation.state import ConversationExecutionStatus, ConversationState
from ohtui.sdk.conversation.stats import ContextUsage, ConversationStats
from ohtui.sdk.conversation.stuck_detector import (
    StuckDetectionThresholds,
    StuckDetector,
    StuckReport,
)
from ohtui.sdk.conversation.summary import ConversationSummary, SearchHit
from ohtui.sdk.conversation.types import (
    ConversationCallbackType,
    ConversationID,
    ConversationTokenCallbackType,
)
from ohtui.sdk.conversation.visualizer import (
    ConversationVisualizerBase,
    DefaultConversationVisualizer,
)
from ohtui.sdk.utils.cipher import Cipher

__all__ = [
    "SECRET_MASK",
    "BaseConversation",
    "CheckpointError",
    "Cipher",
    "ContextUsage",
    "Conversation",
    "ConversationCallbackType",
    "ConversationCatalog",
    "ConversationExecutionStatus",
    "ConversationID",
    "ConversationLockedError",
    "ConversationNotFoundError",
    "ConversationReadOnlyError",
    "ConversationRunError",
    "ConversationState",
    "ConversationStateProtocol",
    "ConversationStats",
    "ConversationSummary",
    "ConversationTokenCallbackType",
    "ConversationVisualizerBase",
    "DefaultConversationVisualizer",
    "EventLog",
    "EventsListBase",
    "LeaseHolder",
    "LocalCatalog",
    "LocalConversation",
    "LookupSecret",
    "OpenConversationError",
    "PersistenceError",
    "SavedConversations",
    "SearchHit",
    "SecretRegistry",
    "SecretSource",
    "SecretValue",
    "SecretsUnavailableWarning",
    "StaticSecret",
    "StorageReadOnlyError",
    "StuckDetectionThresholds",
    "StuckDetector",
    "StuckReport",
    "delete_conversation",
    "find_conversation",
    "get_agent_final_response",
    "history_tail",
    "list_conversations",
    "recent_events",
    "rename_conversation",
    "search_conversations",
]
