"""Type aliases shared by the events."""

from typing import Literal

EventID = str
ToolCallID = str
SourceType = Literal["agent", "user", "environment"]
