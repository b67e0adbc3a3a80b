"""Routers: one LLM in front of several, choosing which answers each call (the SDK's
`openhands.sdk.llm.router`)."""

from ohtui.sdk.llm.router.base import RouterLLM
from ohtui.sdk.llm.router.impl.multimodal import MultimodalRouter
from ohtui.sdk.llm.router.impl.random import RandomRouter

__all__ = ["MultimodalRouter", "RandomRouter", "RouterLLM"]
