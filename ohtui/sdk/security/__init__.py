"""Risk levels, confirmation policies and security analyzers."""

from ohtui.sdk.security.risk import SecurityRisk

__all__ = ["SecurityRisk"]
