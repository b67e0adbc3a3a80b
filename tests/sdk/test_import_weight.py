"""`import ohtui.sdk` stays light: what a conversation may never use loads on first use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

NOT_ON_IMPORT = [
    "litellm",
    "rich",  # the visualizer and `visualize` load it when something is shown
    "asyncio",
    "importlib.metadata",  # pydantic's plugin lookup: no model is built on import
    "ohtui.sdk.mcp.manager",
    "ohtui.sdk.security.pattern_analyzer",
    "ohtui.sdk.security.policy_rails",
    "ohtui.sdk.security.command_rules",
    "ohtui.sdk.security.shell",  # the approval rules load it when they first read a command
    "ohtui.sdk.conversation.impl.remote_conversation",
    "ohtui.sdk.conversation.impl.websocket_client",
    # A conversation loads the hook runner when it has hooks to run (the package itself,
    # and the agent hook's port the conversation provides a runner to, load on import).
    "ohtui.sdk.hooks.runner",
    "ohtui.sdk.hooks.config",
    "ohtui.sdk.hooks.processes",
    "ohtui.sdk.hooks.llm_hooks",
]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


NOT_FOR_A_CONVERSATION = [
    *(name for name in NOT_ON_IMPORT if name != "importlib.metadata"),  # (models are built)
    "ohtui.sdk.security.approval_rules",  # loads when a rules policy is made or read
    "ohtui.sdk.mcp.config",  # MCP's configuration, when the agent has servers
    "ohtui.sdk.mcp.server_config",
    "ohtui.sdk.utils.git_cache",  # plugins and public skills fetch with it
]


def test_a_conversation_leaves_the_parts_it_does_not_use_unloaded() -> None:
    # A script's first steps: an LLM, an agent without tools or MCP servers, a conversation.
    result = run_python(
        "import sys, tempfile\n"
        "from ohtui.sdk import LLM, Agent, Conversation\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    agent = Agent(llm=LLM(model='openai/none'), tools=[], mcp_config={})\n"
        "    Conversation(agent=agent, workspace=tmp, persistence_dir=tmp + '/c',"
        " visualizer=None).close()\n"
        f"loaded = [m for m in {NOT_FOR_A_CONVERSATION!r} if m in sys.modules]\n"
        "assert not loaded, loaded"
    )
    assert result.returncode == 0, result.stderr


def test_importing_the_sdk_leaves_the_optional_parts_unloaded() -> None:
    result = run_python(
        "import sys, ohtui.sdk\n"
        f"loaded = [m for m in {NOT_ON_IMPORT!r} if m in sys.modules]\n"
        "assert not loaded, loaded"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_lazy_names_load_on_first_use_and_saved_kinds_still_resolve() -> None:
    # In a fresh process, before anything imported them: a saved policy and analyzers are
    # read back by kind, and the package names give the same classes.
    result = run_python(
        "import ohtui.sdk as sdk\n"
        "from ohtui.sdk.security import ConfirmationPolicyBase, SecurityAnalyzerBase\n"
        "rule = {'tool': 'terminal', 'command_prefix': 'ls'}\n"
        "policy = ConfirmationPolicyBase.model_validate("
        "{'kind': 'ApprovalRulesPolicy', 'rules': [rule]})\n"
        "assert type(policy) is sdk.ApprovalRulesPolicy, type(policy)\n"
        "assert policy.rules[0].command_prefix == 'ls'\n"
        "for kind in ('PatternSecurityAnalyzer', 'PolicyRailSecurityAnalyzer'):\n"
        "    analyzer = SecurityAnalyzerBase.model_validate({'kind': kind})\n"
        "    assert type(analyzer) is getattr(sdk, kind), type(analyzer)\n"
        "from ohtui.sdk import ApprovalRule, HookConfig, RemoteConversation\n"
        "assert RemoteConversation.__name__ == 'RemoteConversation'\n"
        "assert HookConfig.__module__ == 'ohtui.sdk.hooks.config'\n"
        "from ohtui.sdk.security import suggest_rules, RuleScope\n"
        "assert ApprovalRule.__module__ == 'ohtui.sdk.security.approval_rules'\n"
        "try:\n"
        "    sdk.NoSuchName\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchName' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('an unknown name resolved')\n"
    )
    assert result.returncode == 0, result.stderr


def test_importing_the_sdk_imports_nothing_of_the_engine() -> None:
    # Every name of the package loads on first use: the import itself builds no model.
    result = run_python(
        "import sys, ohtui.sdk as sdk\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('ohtui.sdk.', 'pydantic')))\n"
        "assert loaded == ['ohtui.sdk.utils', 'ohtui.sdk.utils.lazy'], loaded\n"
        "assert set(sdk.__all__) <= set(dir(sdk)), set(sdk.__all__) - set(dir(sdk))\n"
        "from ohtui.sdk import LLM, Agent, Conversation\n"
        "assert sdk.Agent is Agent and sdk.event.Event is sdk.Event\n"
        "for name in sdk.__all__:\n"
        "    assert getattr(sdk, name) is not None, name\n"
    )
    assert result.returncode == 0, result.stderr


def test_every_kind_resolves_in_a_process_that_imported_only_the_package() -> None:
    # The kinds the engine defines once its packages are imported (as `import ohtui.sdk`
    # did when it imported them eagerly) ...
    listed = run_python(
        "from ohtui.sdk.utils.kinds import import_kind_modules\n"
        "from ohtui.sdk.utils.models import DiscriminatedUnionMixin as D\n"
        "import_kind_modules()\n"
        "seen, stack = set(), [D]\n"
        "while stack:\n"
        "    sub = stack.pop()\n"
        "    seen.add(sub.__name__)\n"
        "    stack.extend(sub.__subclasses__())\n"
        "print('\\n'.join(sorted(seen - {'DiscriminatedUnionMixin'})))\n"
    )
    assert listed.returncode == 0, listed.stderr
    kinds = listed.stdout.split()
    assert {"MessageEvent", "ActionEvent", "FinishAction", "MCPToolAction"} <= set(kinds)
    # ... are all found by name in a fresh process that imported only `ohtui.sdk` and the
    # event base, and a saved event of each family reads back as its own class.
    result = run_python(
        "import ohtui.sdk\n"
        "from ohtui.sdk.utils.models import DiscriminatedUnionMixin as D\n"
        f"for kind in {kinds!r}:\n"
        "    assert D.resolve_kind(kind).__name__ == kind, kind\n"
    )
    assert result.returncode == 0, result.stderr
    saved = run_python(
        "import ohtui.sdk as sdk\n"
        "from ohtui.sdk.llm import Message, TextContent\n"
        "event = sdk.MessageEvent(source='user', llm_message=Message(role='user',"
        " content=[TextContent(text='hi')]))\n"
        "print(event.model_dump_json())\n"
    )
    assert saved.returncode == 0, saved.stderr
    read = run_python(
        "import json, ohtui.sdk\n"
        "from ohtui.sdk.event.base import Event\n"
        f"event = Event.model_validate(json.loads({saved.stdout.strip()!r}))\n"
        "assert type(event).__name__ == 'MessageEvent', type(event)\n"
        "assert event.llm_message.content[0].text == 'hi'\n"
    )
    assert read.returncode == 0, read.stderr
