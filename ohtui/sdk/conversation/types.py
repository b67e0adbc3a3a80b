"""Type aliases of the conversation layer."""

import uuid
from collections.abc import Callable

from ohtui.sdk.event.base import Event
from ohtui.sdk.llm.streaming import LLMStreamChunk

ConversationID = uuid.UUID
ConversationCallbackType = Callable[[Event], None]
ConversationTokenCallbackType = Callable[[LLMStreamChunk], None]
