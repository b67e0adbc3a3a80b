"""TokenEvent: token ids of one LLM exchange, for providers that return them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text


class TokenEvent(Event):
    """Prompt and response token ids (e.g. from vLLM)."""

    source: SourceType = "environment"
    prompt_token_ids: list[int] = Field(default_factory=list)
    response_token_ids: list[int] = Field(default_factory=list)

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        return Text(
            f"Tokens: {len(self.prompt_token_ids)} prompt, {len(self.response_token_ids)} response",
            style="dim",
        )
