"""Opening conversations from a profile: secrets reach the conversation, and a resumed one
gets its saved secrets back, decrypted with the key in the OS keyring."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.opening import NoModelError, SetupError, Target, start
from ohtui.opening.local import open_conversation
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.settings.profile import Profile
from ohtui.settings.secrets import SecretStore, probe_keyring

CONFIG = '[llm]\nmodel = "openai/test-model"\nbase_url = "http://127.0.0.1:9/v1"\n'


def profile(tmp_path: Path, *, use_keyring: bool = True) -> Profile:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return Profile(path, use_keyring=use_keyring, environ={}).load()


def test_user_secrets_reach_the_conversation_and_come_back_from_the_keyring(
    tmp_path: Path, workspace: Path, persistence_dir: Path, os_keyring: object
) -> None:
    SecretStore(probe_keyring()).set_user_secrets({"DEPLOY_TOKEN": "tok-encrypted-77"})
    opened = open_conversation(profile(tmp_path), workspace, persistence_dir)
    registry = opened.conversation.state.secret_registry
    assert registry.get_secrets_as_env_vars("echo $DEPLOY_TOKEN") == {
        "DEPLOY_TOKEN": "tok-encrypted-77"
    }
    conversation_id = opened.conversation.id.hex
    opened.conversation.send_message("hello")  # something to resume
    opened.conversation.close()
    for saved in persistence_dir.rglob("*"):
        if saved.is_file():
            assert b"tok-encrypted-77" not in saved.read_bytes(), saved

    # The user removes the secret from the settings; the conversation still had it.
    SecretStore(probe_keyring()).set_user_secrets({})
    again = open_conversation(
        profile(tmp_path), workspace, persistence_dir, Target(resume_id=conversation_id)
    )
    try:
        assert again.resumed
        restored = again.conversation.state.secret_registry
        assert restored.get_secrets_as_env_vars("echo $DEPLOY_TOKEN") == {
            "DEPLOY_TOKEN": "tok-encrypted-77"
        }
    finally:
        again.conversation.close()


def test_without_a_keyring_saved_secrets_are_not_restored(
    tmp_path: Path, workspace: Path, persistence_dir: Path, no_keyring: None
) -> None:
    first = profile(tmp_path)
    first.use_memory_secrets()
    first.secrets.set_user_secrets({"DEPLOY_TOKEN": "tok-memory-only"})
    opened = open_conversation(first, workspace, persistence_dir)
    assert opened.conversation.state.secret_registry.get_secrets_as_env_vars("$DEPLOY_TOKEN")
    opened.conversation.send_message("hello")
    conversation_id = opened.conversation.id.hex
    opened.conversation.close()
    again = open_conversation(
        profile(tmp_path), workspace, persistence_dir, Target(resume_id=conversation_id)
    )
    try:
        registry = again.conversation.state.secret_registry
        assert registry.get_secrets_as_env_vars("echo $DEPLOY_TOKEN") == {}
    finally:
        again.conversation.close()
    for saved in persistence_dir.rglob("*"):
        if saved.is_file():
            assert b"tok-memory-only" not in saved.read_bytes(), saved


def test_no_model_and_nothing_to_continue_say_what_to_do(
    tmp_path: Path, workspace: Path, persistence_dir: Path
) -> None:
    empty = Profile(tmp_path / "none.toml", use_keyring=False, environ={}).load()
    with pytest.raises(NoModelError, match="Choose one in /settings"):
        open_conversation(empty, workspace, persistence_dir)
    with pytest.raises(SetupError, match=r"No saved conversation in .* to continue"):
        open_conversation(
            profile(tmp_path, use_keyring=False),
            workspace,
            persistence_dir,
            Target(continue_latest=True),
        )


def test_a_resumed_conversation_follows_the_current_stuck_detection_setting(
    tmp_path: Path, workspace: Path, persistence_dir: Path
) -> None:
    """The SDK keeps a conversation's saved stuck_detection; ohtui's setting still rules."""
    opened = open_conversation(profile(tmp_path), workspace, persistence_dir)
    assert opened.conversation.stuck_detector is not None
    opened.conversation.send_message("hello")  # something to resume
    conversation_id = opened.conversation.id.hex
    opened.conversation.close()

    config = tmp_path / "config.toml"
    config.write_text(CONFIG + "[agent]\nstuck_detection = false\n", encoding="utf-8")
    changed = Profile(config, use_keyring=True, environ={}).load()
    again = open_conversation(
        changed, workspace, persistence_dir, Target(resume_id=conversation_id)
    )
    try:
        assert again.resumed
        assert again.conversation.state.stuck_detection is False
        assert again.conversation.stuck_detector is None
    finally:
        again.conversation.close()


def test_start_installs_the_safety_and_keeps_a_resumed_conversations_policy(
    tmp_path: Path, workspace: Path, persistence_dir: Path, no_keyring: None
) -> None:
    """One call does the opening sequence: safety installed, the saved policy of a resumed
    conversation kept unless this run chose one, the warnings collected in order."""
    from ohtui.sdk import ApprovalRulesPolicy, NeverConfirm
    from ohtui.settings.overrides import Override

    started = start(profile(tmp_path, use_keyring=False), workspace, persistence_dir)
    conversation = started.conversation
    policy = conversation.state.confirmation_policy
    assert isinstance(policy, ApprovalRulesPolicy)
    assert conversation.state.security_analyzer is not None
    assert started.held_by is None
    assert all("API key" not in notice for notice in started.notices)  # a base URL needs none
    conversation.set_confirmation_policy(policy.model_copy(update={"fallback": NeverConfirm()}))
    conversation.send_message("hello")
    conversation_id = conversation.id.hex
    conversation.close()

    again = start(
        profile(tmp_path, use_keyring=False),
        workspace,
        persistence_dir,
        Target(resume_id=conversation_id),
    )
    assert again.opened.resumed
    assert ConfirmationPolicy.from_engine(again.conversation.state.confirmation_policy) == "never"
    again.conversation.close()

    chosen = Profile(
        tmp_path / "config.toml",
        {("confirmation", "policy"): Override("always", "--confirm")},
        use_keyring=False,
        environ={},
    ).load()
    third = start(chosen, workspace, persistence_dir, Target(resume_id=conversation_id))
    try:
        assert (
            ConfirmationPolicy.from_engine(third.conversation.state.confirmation_policy) == "always"
        )
    finally:
        third.conversation.close()


def test_start_opens_a_conversation_another_ohtui_runs_read_only_when_asked(
    tmp_path: Path, workspace: Path, persistence_dir: Path
) -> None:
    from ohtui.sdk import ConversationLockedError

    first = start(profile(tmp_path, use_keyring=False), workspace, persistence_dir)
    first.conversation.send_message("hello")
    target = Target(resume_id=first.conversation.id.hex)
    try:
        with pytest.raises(ConversationLockedError):
            start(profile(tmp_path, use_keyring=False), workspace, persistence_dir, target)
        reader = start(
            profile(tmp_path, use_keyring=False),
            workspace,
            persistence_dir,
            target,
            read_only_fallback=True,
        )
        assert reader.held_by is not None and reader.conversation.state.read_only
        assert reader.notices == ()
        reader.conversation.close()
    finally:
        first.conversation.close()


def test_start_loads_the_project_and_user_skills_and_says_which_files_it_skipped(
    tmp_path: Path,
    workspace: Path,
    persistence_dir: Path,
    no_keyring: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config_dir = tmp_path / "config"
    monkeypatch.setenv("OHTUI_CONFIG_DIR", str(config_dir))
    (config_dir / "skills").mkdir(parents=True)
    (config_dir / "skills" / "tea.md").write_text("---\ntriggers: [tea]\n---\nGreen, 80 C.\n")
    (workspace / "AGENTS.md").write_text("Run make check.\n")
    broken = workspace / ".agents" / "skills" / "broken.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\ntriggers: tea\n---\n")

    started = start(profile(tmp_path, use_keyring=False), workspace, persistence_dir)
    try:
        context = started.conversation.agent.agent_context
        assert context is not None
        assert {s.name for s in context.skills} >= {"agents", "tea"}
        [notice] = [n for n in started.notices if "skill" in n]
        assert notice.startswith("Skipped 1 skill file(s): ")
        assert str(broken) in notice and "'triggers' must be a list" in notice
    finally:
        started.conversation.close()


def test_the_context_strategy_and_window_from_the_settings_are_built_into_the_agent(
    tmp_path: Path, workspace: Path, persistence_dir: Path
) -> None:
    from ohtui.sdk import LLMSummarizingCondenser, SlidingWindowConversationManager

    path = tmp_path / "config.toml"
    path.write_text(
        CONFIG + '[context]\nstrategy = "sliding_window"\nwindow_size = 6\n'
        "max_input_tokens = 32000\n",
        encoding="utf-8",
    )
    opened = open_conversation(
        Profile(path, use_keyring=False, environ={}).load(), workspace, persistence_dir
    )
    try:
        agent = opened.conversation.agent
        assert isinstance(agent.conversation_manager, SlidingWindowConversationManager)
        assert agent.conversation_manager.window_size == 6 and agent.condenser is None
        assert agent.llm.context_window == 32000
    finally:
        opened.conversation.close()
    default = open_conversation(profile(tmp_path, use_keyring=False), workspace, persistence_dir)
    try:
        assert isinstance(default.conversation.agent.condenser, LLMSummarizingCondenser)
        assert default.conversation.agent.conversation_manager is None
    finally:
        default.conversation.close()
