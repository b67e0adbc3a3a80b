"""What the agent's shell never inherits: ohtui's own settings and the LLM providers' keys.

The process running the agent holds the user's LLM credentials in its environment, and every
command the agent runs would print them with `env`. The agent's bash starts from this process's
environment minus every variable named below (matched case-insensitively, `*` standing for any
run of characters). The names are those litellm reads for its providers. A user who wants a
command to have one of them gives it to the conversation as a secret of the same name: it is
then exported to the commands that name it, and masked in what they print.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping

WITHHELD: tuple[str, ...] = (
    # ohtui's own settings, its API key among them.
    "OHTUI_*",
    # Any provider's key, token or endpoint, in the forms litellm reads
    # (OPENAI_API_KEY, CO_API_KEY, WATSONX_APIKEY, REPLICATE_API_TOKEN, TOGETHER_AI_TOKEN...).
    "*_API_KEY",
    "*_APIKEY",
    "*_API_SECRET",
    "*_API_TOKEN",
    "*_AI_TOKEN",
    "*_API_BASE",
    "*_BASE_URL",
    # Providers all of whose variables litellm owns (organisation, auth tokens, versions...).
    "LITELLM_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "AZURE_*",
    "GEMINI_*",
    "VERTEX_*",
    "VERTEXAI_*",
    "WATSONX_*",
    "DATABRICKS_*",
    "HUGGINGFACE_*",
    "GIGACHAT_*",
    "GITHUB_COPILOT_*",
    # Cloud credentials litellm uses for Bedrock, SageMaker and Vertex AI.
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_WEB_IDENTITY_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    # Single tokens under names of their own.
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "FRIENDLI_TOKEN",
    "SNOWFLAKE_JWT",
    "AIMLAPI_KEY",
    "COMETAPI_KEY",
)
"""Patterns of the variable names the agent's shell never inherits."""

_WITHHELD = re.compile("|".join(fnmatch.translate(pattern) for pattern in WITHHELD))


def is_withheld(name: str) -> bool:
    """Whether the variable `name` is kept from the agent's shell."""
    return _WITHHELD.match(name.upper()) is not None


def agent_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """`environ` without the withheld variables: what the agent's shell starts from."""
    return {name: value for name, value in environ.items() if not is_withheld(name)}
