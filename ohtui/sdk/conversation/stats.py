"""ConversationStats: the metrics of every LLM a conversation used, by usage_id (the SDK's
`conversation_stats`). They live with the agent, which fills them, below the conversation."""

from ohtui.sdk.agent.conversation_contract import ContextUsage, ConversationStats

__all__ = ["ContextUsage", "ConversationStats"]
