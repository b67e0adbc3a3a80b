"""Type aliases shared by the events, at the path the SDK names them (see `event.base.types`)."""

from ohtui.sdk.event.base.types import ROOT_PARENT_ID, EventID, SourceType, ToolCallID

__all__ = ["ROOT_PARENT_ID", "EventID", "SourceType", "ToolCallID"]
