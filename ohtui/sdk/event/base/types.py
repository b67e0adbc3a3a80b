"""Type aliases shared by the events: the lowest layer of `ohtui.sdk.event`."""

from typing import Literal

EventID = str
ToolCallID = str
SourceType = Literal["agent", "user", "environment"]
