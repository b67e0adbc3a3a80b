"""The agent's shell never inherits ohtui's own settings or an LLM provider's credentials.

A real bash is asked for its environment every way an attacker (or a careless model) would;
the values ohtui holds must show in none of the answers, while ordinary variables still pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.sdk.conversation import SecretRegistry
from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor, TerminalObservation
from ohtui.sdk.tools.terminal.environment import agent_environment, is_withheld

WITHHELD = {
    "OHTUI_API_KEY": "ohtui-key-7b1c2d3e4f5a6b7c",
    "OHTUI_BASE_URL": "http://ohtui-base.invalid/v1",
    "OPENAI_API_KEY": "sk-openai-0a1b2c3d4e5f6a7b8c9d",
    "OPENAI_ORGANIZATION": "org-openai-5566778899",
    "ANTHROPIC_API_KEY": "sk-ant-api03-1122334455667788",
    "ANTHROPIC_AUTH_TOKEN": "anthropic-auth-99aa88bb77cc",
    "ANTHROPIC_BASE_URL": "https://anthropic-proxy.invalid",
    "OPENROUTER_API_KEY": "sk-or-v1-aabbccddeeff0011",
    "AZURE_API_KEY": "azure-key-0f1e2d3c4b5a6978",
    "AZURE_CLIENT_SECRET": "azure-client-secret-31415926",
    "AZURE_AD_TOKEN": "azure-ad-token-27182818",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_SESSION_TOKEN": "aws-session-token-8675309",
    "AWS_BEARER_TOKEN_BEDROCK": "bedrock-bearer-1234abcd",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/u/.config/gcloud/vertex-sa-4242.json",
    "VERTEXAI_CREDENTIALS": "vertex-credentials-5151",
    "GEMINI_API_KEY": "gemini-key-6161aabb",
    "HF_TOKEN": "hf_0123456789abcdefABCDEF",
    "HUGGINGFACE_API_KEY": "hf-api-key-7171ccdd",
    "REPLICATE_API_TOKEN": "r8_replicate-token-8181",
    "TOGETHER_AI_TOKEN": "together-token-9191eeff",
    "WATSONX_ZENAPIKEY": "watsonx-zen-2323",
    "DATABRICKS_TOKEN": "dapi-databricks-3434",
    "LITELLM_MASTER_KEY": "sk-litellm-master-4545",
    "MY_PROVIDER_API_BASE": "https://my-provider.invalid/api",
    "openai_api_key": "lowercase-openai-key-5656",
}
KEPT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "GIT_AUTHOR_NAME": "Ada",
    "AWS_REGION": "eu-west-1",
    "PROJECT_SETTING": "kept-value-1357",
}


def test_the_list_withholds_ohtui_and_provider_variables_and_keeps_the_rest() -> None:
    assert sorted(n for n in WITHHELD if not is_withheld(n)) == []
    assert sorted(n for n in KEPT if is_withheld(n)) == []
    assert agent_environment({**WITHHELD, **KEPT}) == KEPT


@pytest.fixture
def executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TerminalExecutor]:
    """A terminal started from an environment full of keys (and one harmless variable)."""
    for name, value in WITHHELD.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROJECT_SETTING", KEPT["PROJECT_SETTING"])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    terminal = TerminalExecutor(working_dir=str(workspace), timeout=20)
    yield terminal
    terminal.close()


def run(executor: TerminalExecutor, command: str) -> TerminalObservation:
    return executor(TerminalAction(command=command))


PROBES = [
    "env",
    "printenv",
    "set",
    "declare -p",
    "export -p",
    "compgen -v",
    "cat /proc/self/environ | tr '\\0' '\\n'",
    "cat /proc/$$/environ | tr '\\0' '\\n'",
    "python3 -c 'import os; print(dict(os.environ))'",
    "bash -c 'env' && sh -c 'env'",
]


@pytest.mark.parametrize("probe", PROBES)
def test_no_probe_of_the_shell_finds_a_withheld_value(
    executor: TerminalExecutor, probe: str
) -> None:
    observation = run(executor, probe)
    assert observation.exit_code == 0, observation.text
    leaked = [name for name, value in WITHHELD.items() if value in observation.text]
    assert leaked == []
    for name in WITHHELD:
        assert f"{name}=" not in observation.text
    assert set(observation.text.split("\n")) & set(WITHHELD) == set()  # not even a name


def test_encoding_the_variables_finds_them_empty(executor: TerminalExecutor) -> None:
    observation = run(
        executor,
        'echo "[$OPENAI_API_KEY$OHTUI_API_KEY$AWS_SECRET_ACCESS_KEY]" | base64; '
        'printf %s "$ANTHROPIC_API_KEY$HF_TOKEN" | xxd -p | wc -c',
    )
    assert observation.text.split("\n")[:2] == ["W10K", "0"]  # base64 of "[]\n"; no bytes


def test_ordinary_variables_still_reach_the_shell(executor: TerminalExecutor) -> None:
    observation = run(executor, 'echo "setting=$PROJECT_SETTING" && command -v bash')
    assert "setting=kept-value-1357" in observation.text
    assert observation.exit_code == 0


def test_a_secret_the_user_hands_over_by_the_same_name_is_exported_to_its_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-1234")
    registry = SecretRegistry()
    registry.update_secrets({"OPENAI_API_KEY": "sk-handed-over-5678"})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    terminal = TerminalExecutor(working_dir=str(workspace), timeout=20, secrets=registry)
    try:
        given = run(terminal, 'test "$OPENAI_API_KEY" = sk-handed-over-5678 && echo GIVEN')
        other = run(terminal, "env | grep -c '^OPENAI_API' || true")
    finally:
        terminal.close()
    assert "GIVEN" in given.text
    assert other.text.split("\n")[0] == "0"
    assert "sk-from-the-environment-1234" not in given.text + other.text
