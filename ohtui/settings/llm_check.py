"""One tiny call to the configured model: does the key, the model name and the URL work?"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.settings.schema import LLMSettings

CHECK_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Whether the model answered, and what to tell the user."""

    ok: bool
    message: str
    seconds: float


def check_llm(settings: LLMSettings, api_key: str | None) -> CheckResult:
    """Ask the model for a few tokens (no retries); never raises. Blocks: call off the UI."""
    from ohtui.sdk import LLM, Message, TextContent
    from ohtui.sdk.llm import LLMError
    from ohtui.settings.secrets import NO_KEY

    if not settings.model:
        return CheckResult(False, "Choose a model first.", 0.0)
    if api_key is None and settings.base_url:
        api_key = NO_KEY
    llm = LLM(
        model=settings.model,
        base_url=settings.base_url,
        api_version=settings.api_version,
        api_key=api_key,
        timeout=min(settings.timeout, CHECK_TIMEOUT),
        num_retries=0,
        max_output_tokens=16,
        usage_id="settings-check",
    )
    started = time.monotonic()
    try:
        llm.completion([Message(role="user", content=[TextContent(text="Reply with: OK")])])
    except LLMError as exc:
        return CheckResult(False, str(exc), time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - whatever it is, the user reads it
        return CheckResult(
            False, f"The test call failed: {type(exc).__name__}: {exc}", time.monotonic() - started
        )
    seconds = time.monotonic() - started
    return CheckResult(True, f"{settings.model} answered in {seconds:.1f} s.", seconds)
