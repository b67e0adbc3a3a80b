"""Type aliases shared by the events: the lowest layer of `ohtui.sdk.event`."""

from typing import Final, Literal

EventID = str
ToolCallID = str
SourceType = Literal["agent", "user", "environment", "hook"]

ROOT_PARENT_ID: Final = "__root__"
"""The `parent_id` of a root made after `navigate_to(None)` over a non-empty log (a root at
index 0 has None). No event id may equal it, so it never names a real parent."""
