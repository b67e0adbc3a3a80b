"""The `switch_llm` tool: the agent moves its conversation to another saved LLM profile.

Profiles are those of the default `LLMProfileStore` (~/.openhands/profiles); the tool's
description lists them as they were when the tool was made. The switch takes effect on the
next LLM call (this one finishes with the current model). Not among an agent's tools unless
asked for: `include_default_tools=[..., "SwitchLLMTool"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition, ToolExecutor

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

_DESCRIPTION = """Switch this conversation to another saved LLM profile, for the steps after
this one (this call still runs on the current model). Use it when another profile suits the
next step better. Give `profile_name` exactly as listed, and a short `reason`.

Saved LLM profiles:
{profiles}"""


class SwitchLLMAction(Action):
    """Move the conversation to a saved LLM profile."""

    profile_name: str = Field(description="The saved LLM profile to use from the next step on.")
    reason: str = Field(description="Why that profile suits the next steps better.")

    @property
    def visualize(self) -> Text:
        """The profile, and why."""
        from rich.text import Text

        text = Text("Switch LLM profile: ", style="bold magenta")
        text.append(self.profile_name)
        if self.reason:
            text.append(f"\nReason: {self.reason}")
        return text


class SwitchLLMObservation(Observation):
    """What came of a switch: the profile, and the model now active (None on failure)."""

    profile_name: str = Field(description="The profile the switch asked for.")
    reason: str | None = Field(default=None, description="The reason the agent gave.")
    active_model: str | None = Field(default=None, description="The model now thinking.")


@runtime_checkable
class ProfileSwitcher(Protocol):
    """What the tool needs of its conversation: `switch_profile`, and the agent's model."""

    def switch_profile(self, profile_name: str) -> None:
        """Think with the saved profile from the next LLM call on."""

    @property
    def agent(self) -> Any:
        """The conversation's agent (its `llm.model` is reported)."""


class SwitchLLMExecutor(ToolExecutor[SwitchLLMAction, SwitchLLMObservation]):
    """Asks the conversation to switch; every failure is an error observation, in words."""

    def __call__(
        self, action: SwitchLLMAction, conversation: object = None
    ) -> SwitchLLMObservation:
        def failed(text: str) -> SwitchLLMObservation:
            return SwitchLLMObservation.from_text(
                text, is_error=True, profile_name=action.profile_name, reason=action.reason
            )

        if not isinstance(conversation, ProfileSwitcher):
            return failed("This conversation cannot switch its LLM profile.")
        try:
            conversation.switch_profile(action.profile_name)
        except FileNotFoundError:
            return failed(f"LLM profile '{action.profile_name}' was not found.")
        except ValueError as exc:
            return failed(str(exc))
        except Exception as exc:  # noqa: BLE001 - the agent reads why, and carries on
            return failed(
                f"Failed to switch LLM profile '{action.profile_name}': {type(exc).__name__}: {exc}"
            )
        model = str(conversation.agent.llm.model)
        return SwitchLLMObservation.from_text(
            f"Switched LLM profile to '{action.profile_name}' with active model '{model}'. "
            f"Reason: {action.reason} Future agent steps will use this profile.",
            profile_name=action.profile_name,
            reason=action.reason,
            active_model=model,
        )


class SwitchLLMTool(ToolDefinition[SwitchLLMAction, SwitchLLMObservation]):
    """The built-in `switch_llm` tool; `SwitchLLMTool()` lists the profiles saved now."""

    def __init__(self, **fields: Any) -> None:
        # The profile store (file lock, keyring helpers) loads only when the tool is made.
        from ohtui.sdk.llm.llm_profile_store import profile_names

        names = profile_names()
        listed = "\n".join(f"- {name}" for name in names) or "- (none saved yet)"
        defaults: dict[str, Any] = {
            "description": _DESCRIPTION.format(profiles=listed),
            "action_type": SwitchLLMAction,
            "observation_type": SwitchLLMObservation,
            "annotations": ToolAnnotations(
                title="switch_llm",
                readOnlyHint=False,
                destructiveHint=False,
                idempotentHint=False,
                openWorldHint=False,
            ),
            "executor": SwitchLLMExecutor(),
        }
        super().__init__(**{**defaults, **fields})

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The `switch_llm` tool; it takes no parameters."""
        if params:
            raise ValueError(f"switch_llm takes no parameters, got {sorted(params)}")
        return [cls()]
