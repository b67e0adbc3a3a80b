"""The LLM a conversation switches to (`/model`): the one it thinks with, another model.

Everything but the model is kept (timeouts, retries, streaming, temperature...), and the
address where the provider stays the same (a custom server's base URL serves its other
models); the API key is looked up for the new model's provider as at opening (a variable,
then the keyring). A provider that needs a key and has none is refused, saying how to set
one, before anything changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.opening.errors import SetupError
from ohtui.settings.secrets import NO_KEY, needs_api_key, provider_env_var, provider_of

if TYPE_CHECKING:
    from ohtui.opening.records import Callbacks
    from ohtui.sdk import LLM
    from ohtui.settings.profile import Profile

AGENT_USAGE = "agent"
"""The usage id of the LLM a conversation opens with (`build_agent`)."""


class MissingKeyError(SetupError):
    """The model's provider needs an API key and none is set; the message says how to set one."""


def usage_id_for(model: str) -> str:
    """The usage id a switched-to model is counted under: its own, so that cost and tokens
    are kept per model (and switching back continues its count)."""
    return f"{AGENT_USAGE}:{model}"


def switched_llm(
    profile: Profile,
    current: LLM,
    model: str,
    callbacks: Callbacks | None = None,
    *,
    api_key: str | None = None,
) -> LLM:
    """`current` thinking with `model` instead, counted under its own usage id, with the
    retry and attempt listeners of `callbacks`. `api_key` (tests) is the key of `current`'s
    provider and wins for a model of that provider. MissingKeyError when the provider needs
    a key and none is set."""
    model = model.strip()
    if not model:
        raise ValueError("Name a model, e.g. /model anthropic/claude-sonnet-4-5.")
    provider = provider_of(model)
    same_provider = provider == provider_of(current.model)
    key: str | None = api_key if same_provider else None
    if key is None:
        key = profile.api_key(model).value
    if key is None and same_provider and current.api_key is not None:
        key = current.api_key.get_secret_value()  # as it opened: e.g. a custom server's
    base_url = current.base_url if same_provider else None
    if key is None and base_url:
        key = NO_KEY
    if key is None and needs_api_key(provider):
        raise MissingKeyError(missing_key_text(profile, model))
    llm = current.model_copy(
        update={
            "model": model,
            "api_key": key,
            "base_url": base_url,
            "api_version": current.api_version if same_provider else None,
            "usage_id": usage_id_for(model),
        }
    )
    if callbacks is not None:
        if callbacks.on_retry is not None:
            llm.add_retry_listener(callbacks.on_retry)
        if callbacks.on_attempt is not None:
            llm.add_attempt_listener(callbacks.on_attempt)
    return llm


def missing_key_text(profile: Profile, model: str) -> str:
    """Why `model` cannot be used without a key, and how to set one (or, for a provider
    litellm does not know, how models are named)."""
    from ohtui.settings.catalog import FEATURED, load_catalog

    provider = provider_of(model)
    if provider not in FEATURED and provider not in load_catalog().models:
        return (
            f"'{provider}' is not a provider ohtui knows (in '{model}'): name the model as "
            "provider/model, e.g. anthropic/claude-sonnet-4-5; /model with no name lists "
            "them. The conversation goes on with the model it has."
        )
    keyring = profile.keyring
    why = "" if keyring.available else f" {keyring.problem}"
    return (
        f"No API key for {provider} ({model}).{why} Set {provider_env_var(provider)} (or "
        f"OHTUI_API_KEY) before starting ohtui, or save a key for {provider} in /settings; "
        "the conversation goes on with the model it has."
    )
