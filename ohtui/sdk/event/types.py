"""Type aliases shared by the events, at the path the SDK names them (see `event.base.types`)."""

from ohtui.sdk.event.base.types import EventID, SourceType, ToolCallID

__all__ = ["EventID", "SourceType", "ToolCallID"]
