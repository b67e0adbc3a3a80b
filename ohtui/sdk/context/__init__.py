"""What shapes the prompts beyond the agent's own: per-agent context."""

from ohtui.sdk.context.agent_context import AgentContext

__all__ = ["AgentContext"]
