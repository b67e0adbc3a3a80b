"""What a sub-conversation takes from its parent: workspace, sandbox, a policy no weaker,
the analyzer, the secrets and what is left of the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.sdk import LLM, Agent, LocalConversation
from ohtui.sdk.sandbox import SandboxConfig, SandboxMode
from ohtui.sdk.security import PatternSecurityAnalyzer
from ohtui.sdk.security.confirmation_policy import AlwaysConfirm, ConfirmRisky, NeverConfirm
from ohtui.sdk.subagent import AgentDefinition, AgentFactory
from ohtui.sdk.subagent.spawn import inherited_policy, open_sub_conversation, subagents_dir


@pytest.mark.parametrize(
    ("parent", "requested", "expected"),
    [
        (ConfirmRisky(), None, ConfirmRisky),  # nothing asked: the parent's
        (NeverConfirm(), ConfirmRisky(), ConfirmRisky),  # the parent asks nothing
        (NeverConfirm(), NeverConfirm(), NeverConfirm),
        (ConfirmRisky(), AlwaysConfirm(), AlwaysConfirm),  # stricter: taken
        (ConfirmRisky(), NeverConfirm(), ConfirmRisky),  # weaker: refused
        (AlwaysConfirm(), ConfirmRisky(), AlwaysConfirm),  # weaker: refused
    ],
)
def test_a_definition_never_weakens_the_parents_policy(
    parent: object, requested: object, expected: type
) -> None:
    assert isinstance(inherited_policy(parent, requested), expected)  # type: ignore[arg-type]


def test_a_sub_conversation_keeps_the_parents_limits(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    parent = LocalConversation(
        agent=Agent(llm=llm, tools=[]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
        max_budget_per_run=2.0,
    )
    parent.set_confirmation_policy(ConfirmRisky())
    parent.set_security_analyzer(PatternSecurityAnalyzer())
    parent.set_sandbox(SandboxConfig(mode=SandboxMode.WORKSPACE_WRITE))
    parent.update_secrets({"API_TOKEN": "tok-123456789"})
    definition = AgentDefinition(
        name="lax", permission_mode="never_confirm", max_budget_per_run=5.0
    )
    factory = AgentFactory(lambda llm: Agent(llm=llm, tools=[]), definition)

    sub = open_sub_conversation(
        parent,
        Agent(llm=llm.model_copy(), tools=[]),
        factory=factory,
        persistence_dir=subagents_dir(parent),
    )

    assert sub.state.workspace.working_dir == parent.state.workspace.working_dir
    assert isinstance(sub.state.confirmation_policy, ConfirmRisky)
    assert isinstance(sub.state.security_analyzer, PatternSecurityAnalyzer)
    assert sub.sandbox == parent.sandbox
    assert sub.state.sandbox is not None and parent.state.sandbox is not None
    assert set(parent.state.sandbox.extra_hidden) <= set(sub.state.sandbox.private)
    assert sub.state.secret_registry.get_secret_value("API_TOKEN") == "tok-123456789"
    assert sub.max_budget_per_run == 2.0  # never more than the parent has left
    assert (
        Path(sub.state.persistence_dir or "").parent
        == Path(parent.state.persistence_dir or "") / "subagents"
    )
    sub.close()
    parent.close()
