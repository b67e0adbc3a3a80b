"""ohtui: a terminal chat app for an AI coding agent, on its own engine (`ohtui.sdk`)."""

__version__ = "0.1.0"
