"""The model catalogue for completion: litellm's bundled model list, read as a JSON file.

Importing litellm takes seconds; its price list is a plain file inside the package, found
without importing it (and never fetched from the network).
"""

from __future__ import annotations

import importlib.util
import json
import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

logger = logging.getLogger(__name__)

MODEL_LIST_FILE = "model_prices_and_context_window_backup.json"
CUSTOM = "openai-compatible"
"""The provider choice for any OpenAI-compatible server (models named openai/<name>)."""
FEATURED = (
    "anthropic",
    "openai",
    "gemini",
    "openrouter",
    "mistral",
    "deepseek",
    "xai",
    "groq",
    "ollama",
    CUSTOM,
)
"""The providers the settings screen offers (any other works as "provider/model")."""
PROVIDER_LABELS = {
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "gemini": "Google Gemini",
    "openrouter": "OpenRouter",
    "mistral": "Mistral",
    "deepseek": "DeepSeek",
    "xai": "xAI",
    "groq": "Groq",
    "ollama": "Ollama (local)",
    CUSTOM: "OpenAI-compatible server (base URL)",
}


@dataclass(frozen=True)
class Catalog:
    """Chat models by provider, named as litellm wants them ("anthropic/claude-…")."""

    models: dict[str, tuple[str, ...]]

    def matches(self, provider: str | None, typed: str, limit: int = 50) -> list[str]:
        """Models of `provider` (all: None) containing every word of `typed`, shortest first."""
        names = (
            self.models.get(provider, ())
            if provider
            else tuple(m for ms in self.models.values() for m in ms)
        )
        words = typed.lower().split()
        found = [m for m in names if all(w in m.lower() for w in words)]
        return sorted(found, key=lambda m: (len(m), m))[:limit]


def provider_label(provider: str) -> str:
    """A provider's name for people."""
    return PROVIDER_LABELS.get(provider, provider)


@cache
def load_catalog() -> Catalog:
    """The chat models litellm knows (empty when its list cannot be read)."""
    path = _model_list_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError) as exc:
        logger.warning("cannot read litellm's model list %s: %s", path, exc)
        data = {}
    models: dict[str, list[str]] = {}
    for key, info in data.items():
        if not isinstance(info, dict) or info.get("mode") != "chat" or key.startswith("ft:"):
            continue
        provider = str(info.get("litellm_provider", "")).split("-")[0]
        if not provider:
            continue
        name = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        models.setdefault(provider, []).append(name)
    return Catalog({p: tuple(dict.fromkeys(ms)) for p, ms in models.items()})


def _model_list_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_LIST_FILE
