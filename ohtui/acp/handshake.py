"""`initialize`: what ohtui tells an ACP client about itself, as plain JSON.

Plain data, standard library only: the answer is sent before the protocol package has loaded
(see `ohtui.acp.serve`), and validated by its `InitializeResponse` when it is sent after.
"""

from __future__ import annotations

from typing import Any

from ohtui import __version__

PROTOCOL_VERSION = 1
"""The protocol version ohtui speaks (the agent-client-protocol package's, 0.12)."""

AUTH_METHOD_ID = "ohtui-api-key"
"""The one authentication method: an API key ohtui finds in the environment or the keyring."""

AUTH_DESCRIPTION = (
    "ohtui reads the model's API key from OHTUI_API_KEY or the provider's variable (e.g. "
    'OPENAI_API_KEY, ANTHROPIC_API_KEY), else from the OS keyring (service "ohtui", entry '
    '"api-key:<provider>", saved by /settings in ohtui). Set one, then authenticate again.'
)


def initialize_result(params: Any) -> dict[str, Any]:
    """The result of `initialize` for these request params: the client's protocol version
    when ohtui speaks it, else ohtui's; what ohtui can do; how it authenticates."""
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    version = asked if asked == PROTOCOL_VERSION else PROTOCOL_VERSION
    return {
        "protocolVersion": version,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"list": {}},
        },
        "authMethods": [{"id": AUTH_METHOD_ID, "name": "API key", "description": AUTH_DESCRIPTION}],
        "agentInfo": {"name": "ohtui", "title": "ohtui", "version": __version__},
    }


def version_problem(params: Any) -> str | None:
    """Why `params` is not a valid `initialize` request (None: it is)."""
    if not isinstance(params, dict):
        return 'initialize needs params: {"protocolVersion": 1, ...}'
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 65535:
        return '"protocolVersion" must be a whole number from 0 to 65535'
    return None
