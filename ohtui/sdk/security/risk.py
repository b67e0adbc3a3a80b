"""SecurityRisk, at the path the SDK names it: it lives in `ohtui.sdk.tool.risk`.

The risk scale is part of a tool call (an action event carries one, a tool's schema asks
the model for one), so it sits below the events; the analyzers here rate actions on it.
"""

from ohtui.sdk.tool.risk import SecurityRisk

__all__ = ["SecurityRisk"]
