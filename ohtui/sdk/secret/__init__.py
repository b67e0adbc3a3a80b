"""Secrets' sources: a fixed value, or one looked up when a command needs it (the SDK's
`openhands.sdk.secret`). Below the conversation, which registers them, and the wire codec,
which carries them."""

from ohtui.sdk.secret.secrets import LookupSecret, SecretSource, StaticSecret, is_secret_header

__all__ = ["LookupSecret", "SecretSource", "StaticSecret", "is_secret_header"]
