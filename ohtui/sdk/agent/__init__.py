"""Agents: an LLM with tools, taking one step at a time."""

from ohtui.sdk.agent.agent import Agent
from ohtui.sdk.agent.base import AgentBase

__all__ = ["Agent", "AgentBase"]
