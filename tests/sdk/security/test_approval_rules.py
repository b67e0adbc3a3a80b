"""Tests for approval rules: matching, deny/allow precedence, suggestions, and real runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from pydantic import ValidationError

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
    ConfirmRisky,
    Conversation,
    ConversationExecutionStatus,
    LocalConversation,
    MessageToolCall,
    NeverConfirm,
    ObservationEvent,
    PatternSecurityAnalyzer,
    SecurityRisk,
    Tool,
    UserRejectObservation,
)
from ohtui.sdk.security import suggest_rules
from ohtui.sdk.tools.file_editor import FileEditorAction
from ohtui.sdk.tools.terminal import TerminalAction

WS = "/home/dev/project"
Status = ConversationExecutionStatus
Factory = Callable[..., LocalConversation]


def terminal(command: str, risk: SecurityRisk = SecurityRisk.UNKNOWN) -> ActionEvent:
    return ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="terminal", arguments="{}"),
        llm_response_id="r1",
        security_risk=risk,
    )


def edit(path: str, command: str = "create") -> ActionEvent:
    fields: dict[str, Any] = {"file_text": "x"} if command == "create" else {}
    return ActionEvent(
        action=FileEditorAction(command=command, path=path, **fields),  # type: ignore[arg-type]
        tool_name="file_editor",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="file_editor", arguments="{}"),
        llm_response_id="r1",
    )


def allow(prefix: str, **kwargs: Any) -> ApprovalRule:
    return ApprovalRule(tool="terminal", command_prefix=prefix, **kwargs)


def deny(prefix: str, **kwargs: Any) -> ApprovalRule:
    return ApprovalRule(tool="terminal", command_prefix=prefix, decision="deny", **kwargs)


def policy(*rules: ApprovalRule) -> ApprovalRulesPolicy:
    return ApprovalRulesPolicy(rules=list(rules), fallback=AlwaysConfirm())


def verdict(p: ApprovalRulesPolicy, action: ActionEvent) -> str:
    return p.decide(action, WS).verdict


# --- terminal prefixes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", "allow"),
        ("git status -s", "allow"),
        ("git  status   --short", "allow"),
        ("git status 2>&1", "allow"),
        ("git status >/dev/null", "allow"),
        ("git statusx", "confirm"),
        ("git", "confirm"),
        ("git push", "confirm"),
        ("git status; rm -rf x", "confirm"),
        ("git status && curl x | sh", "confirm"),
        ("sudo git status", "confirm"),
        ("echo $(rm -rf ~)", "confirm"),
        ("git status > /etc/x", "confirm"),
        ("for i in 1; do git status; done", "allow"),
        ("for c in git; do $c status; done", "confirm"),
        ("./git status", "confirm"),
        ("GIT_DIR=x git status", "confirm"),
        ("git -c core.fsmonitor=x status", "confirm"),
        ('git status "unclosed', "confirm"),
    ],
)
def test_prefix_rule_covers_whole_words_and_every_part(command: str, expected: str) -> None:
    assert verdict(policy(allow("git status")), terminal(command)) == expected


def test_allow_reason_names_the_rule() -> None:
    decision = policy(allow("git status")).decide(terminal("git status -s"), WS)
    assert decision.verdict == "allow"
    assert decision.rule is not None and decision.rule.command_prefix == "git status"
    assert "allowed by rule" in decision.reason
    assert "git status" in decision.reason


def test_wrapper_needs_its_own_rule() -> None:
    assert verdict(policy(allow("git status")), terminal("sudo git status")) == "confirm"
    both = policy(allow("git status"), allow("sudo"))
    assert verdict(both, terminal("sudo git status")) == "allow"


def test_every_part_of_a_pipeline_needs_a_rule() -> None:
    assert verdict(policy(allow("git status")), terminal("git status | grep x")) == "confirm"
    both = policy(allow("git status"), allow("grep"))
    assert verdict(both, terminal("git status | grep x")) == "allow"
    assert verdict(both, terminal("git status | grep x | sh")) == "confirm"


def test_opaque_commands_are_never_allowed_even_when_every_word_is_covered() -> None:
    everything = policy(allow("echo"), allow("rm"), allow("git status"))
    assert verdict(everything, terminal("echo $(rm -rf y)")) == "confirm"
    assert verdict(everything, terminal("git status > /etc/x")) == "confirm"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",
        "ls; rm -rf x",
        "echo $(rm -rf y)",
        "echo `rm -rf y`",
        "ls | xargs rm",
        "sudo rm x",
        'bash -c "rm -rf q"',
        r"find . -exec rm {} \;",
    ],
)
def test_deny_rule_finds_the_command_anywhere(command: str) -> None:
    p = policy(allow("ls"), allow("echo"), allow("xargs"), allow("sudo"), deny("rm"))
    decision = p.decide(terminal(command), WS)
    assert decision.verdict == "deny"
    assert decision.rule is not None and decision.rule.command_prefix == "rm"
    assert "denied by rule" in decision.reason
    assert "`rm …`" in decision.reason


def test_deny_does_not_match_other_commands() -> None:
    p = policy(allow("ls"), deny("rm"))
    assert verdict(p, terminal("ls -la rmdir")) == "allow"
    assert verdict(p, terminal("rmdir x")) == "confirm"


def test_deny_wins_over_allow() -> None:
    assert verdict(policy(allow("rm"), deny("rm")), terminal("rm x")) == "deny"
    assert verdict(policy(deny("rm"), allow("rm")), terminal("rm x")) == "deny"
    assert verdict(policy(allow("git"), deny("git push")), terminal("git push")) == "deny"
    assert verdict(policy(allow("git"), deny("git push")), terminal("git pull")) == "allow"


def test_tool_wide_rules() -> None:
    everything = ApprovalRulesPolicy(rules=[ApprovalRule(tool="*", decision="deny")])
    assert verdict(everything, terminal("ls")) == "deny"
    assert verdict(everything, edit("a.py")) == "deny"
    terminal_only = ApprovalRulesPolicy(rules=[ApprovalRule(tool="terminal")])
    assert verdict(terminal_only, terminal("anything at all")) == "allow"
    assert terminal_only.decide(edit("a.py"), WS).rule is None


def mcp_call(server: str, tool: str, name: str | None = None) -> ActionEvent:
    from ohtui.sdk.mcp import MCPToolAction
    from ohtui.sdk.mcp.definition import mcp_tool_name

    name = name or mcp_tool_name(server, tool)
    return ActionEvent(
        action=MCPToolAction(server=server, tool=tool),
        tool_name=name,
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name=name, arguments="{}"),
        llm_response_id="r1",
    )


def test_mcp_rules_are_keyed_to_the_server_the_tool_comes_from() -> None:
    mine, repo = mcp_call("mine", "deploy"), mcp_call("repo", "deploy")
    for rule in ("mcp:mine/deploy", "mcp:mine/*"):
        keyed = policy(ApprovalRule(tool=rule))
        assert (verdict(keyed, mine), verdict(keyed, repo)) == ("allow", "confirm"), rule
    # A rule naming the tool alone (as before tools were named by server) allows no
    # server's tool, and still denies every server's.
    assert verdict(policy(ApprovalRule(tool="deploy")), mine) == "confirm"
    bare_deny = policy(ApprovalRule(tool="deploy", decision="deny"))
    assert (verdict(bare_deny, mine), verdict(bare_deny, repo)) == ("deny", "deny")
    # A call saved under its old name is covered by the rules of its new one.
    old = mcp_call("mine", "deploy", name="deploy")
    assert verdict(policy(ApprovalRule(tool="mcp:mine/deploy")), old) == "allow"


def test_an_allow_rule_never_matches_the_name_two_servers_can_share() -> None:
    """Server `a_b`'s tool `c` and server `a`'s tool `b_c` are both called `a_b_c` by the
    model: a rule by that name cannot say which it allows."""
    mine, theirs = mcp_call("a_b", "c"), mcp_call("a", "b_c")
    assert mine.tool_name == theirs.tool_name == "a_b_c"
    allowed = policy(ApprovalRule(tool="a_b_c"))
    assert (verdict(allowed, mine), verdict(allowed, theirs)) == ("confirm", "confirm")
    keyed = policy(ApprovalRule(tool="mcp:a_b/c"))
    assert (verdict(keyed, mine), verdict(keyed, theirs)) == ("allow", "confirm")
    denied = policy(ApprovalRule(tool="a_b_c", decision="deny"))  # denying both is safe
    assert (verdict(denied, mine), verdict(denied, theirs)) == ("deny", "deny")


def test_unmatched_actions_go_to_the_fallback() -> None:
    action = terminal("npm test", SecurityRisk.LOW)
    rules = [allow("git status")]
    assert verdict(ApprovalRulesPolicy(rules=rules, fallback=AlwaysConfirm()), action) == "confirm"
    assert verdict(ApprovalRulesPolicy(rules=rules, fallback=NeverConfirm()), action) == "allow"
    assert ApprovalRulesPolicy().fallback == ConfirmRisky()


def test_allow_rule_does_not_wave_through_high_risk() -> None:
    p = policy(allow("git push"))
    assert verdict(p, terminal("git push", SecurityRisk.MEDIUM)) == "allow"
    risky = p.decide(terminal("git push --force", SecurityRisk.HIGH), WS)
    assert risky.verdict == "confirm"
    assert "HIGH" in risky.reason
    lenient = ApprovalRulesPolicy(rules=[allow("git push")], allow_up_to=SecurityRisk.HIGH)
    assert verdict(lenient, terminal("git push --force", SecurityRisk.HIGH)) == "allow"
    strict = ApprovalRulesPolicy(
        rules=[allow("git push")], fallback=AlwaysConfirm(), allow_up_to=SecurityRisk.LOW
    )
    assert verdict(strict, terminal("git push", SecurityRisk.MEDIUM)) == "confirm"


def test_deny_rule_catches_a_path_qualified_command() -> None:
    assert verdict(policy(deny("rm")), terminal("/bin/rm -rf x")) == "deny"


def test_deny_rule_sees_a_command_after_a_heredoc() -> None:
    p = policy(deny("rm"))
    assert verdict(p, terminal("cat <<EOF\nhello world\nEOF\nrm -rf x")) == "deny"


# --- file editor globs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/a.py", "allow"),
        ("src/pkg/deep/b.py", "allow"),
        (f"{WS}/src/c.py", "allow"),
        ("src", "allow"),
        ("../outside.py", "confirm"),
        ("src/../../outside.py", "confirm"),
        ("/etc/passwd", "confirm"),
        ("other/a.py", "confirm"),
        ("srcx/a.py", "confirm"),
    ],
)
def test_path_glob(path: str, expected: str) -> None:
    rule = ApprovalRule(tool="file_editor", path_glob="src/**")
    assert verdict(policy(rule), edit(path)) == expected


def test_single_star_stays_within_one_directory() -> None:
    p = policy(ApprovalRule(tool="file_editor", path_glob="src/*.py"))
    assert verdict(p, edit("src/a.py")) == "allow"
    assert verdict(p, edit("src/sub/a.py")) == "confirm"
    assert verdict(p, edit("src/a.txt")) == "confirm"


def test_absolute_glob() -> None:
    p = policy(ApprovalRule(tool="file_editor", path_glob="/opt/data/**"))
    assert verdict(p, edit("/opt/data/a.txt")) == "allow"
    assert verdict(p, edit("/opt/data/x/y.txt")) == "allow"
    assert verdict(p, edit("/opt/other/a.txt")) == "confirm"
    assert verdict(p, edit("src/a.py")) == "confirm"


def test_path_deny_rule() -> None:
    p = ApprovalRulesPolicy(
        rules=[
            ApprovalRule(tool="file_editor"),
            ApprovalRule(tool="file_editor", path_glob="secrets/**", decision="deny"),
        ]
    )
    assert verdict(p, edit("secrets/key.txt", "view")) == "deny"
    assert verdict(p, edit("src/a.py")) == "allow"


def test_terminal_prefix_rules_do_not_apply_to_files() -> None:
    p = policy(ApprovalRule(tool="*", command_prefix="rm", decision="deny"))
    assert verdict(p, edit("rm.py")) == "confirm"


def test_workspace_glob_does_not_cover_home_paths() -> None:
    p = policy(ApprovalRule(tool="file_editor", path_glob="**"))
    assert verdict(p, edit("~/.bashrc")) == "confirm"


# --- suggestions, scopes, validation ----------------------------------------------------


@pytest.mark.parametrize(
    ("command", "prefixes"),
    [
        ("git status -s", ["git status"]),
        ("npm test --watch", ["npm test"]),
        ("ls -la", ["ls"]),
        ("/usr/bin/git diff HEAD", ["git diff"]),
        ("python -m pytest -x", ["python -m pytest"]),
        ("python tools/gen.py --fast", ["python tools/gen.py"]),
        ("make", ["make"]),
        ("cd build && npm test", ["cd", "npm test"]),
        ("git add . && git commit -m 'x' && git add -p", ["git add", "git commit"]),
        ("ls | grep foo", ["ls", "grep"]),
        ("timeout 10 npm test", ["timeout", "npm test"]),
    ],
)
def test_suggest_one_rule_per_part(command: str, prefixes: list[str]) -> None:
    suggestion = suggest_rules(terminal(command), WS)
    assert [r.command_prefix for r in suggestion.rules] == prefixes
    assert all(r.tool == "terminal" and r.decision == "allow" for r in suggestion.rules)
    assert all(r.scope == "session" for r in suggestion.rules)
    assert suggestion.reason == ""
    # Together the rules allow the action they came from.
    rules = ApprovalRulesPolicy(rules=list(suggestion.rules), fallback=AlwaysConfirm())
    assert verdict(rules, terminal(command)) == "allow"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -rf build && npm test", "`rm` deletes or changes what it cannot undo"),
        ("rm -rf build", "`rm` deletes or changes what it cannot undo"),
        ("sudo apt update", "`sudo` runs commands with other rights"),
        ("find . | xargs grep x", "`xargs` runs whatever it is given"),
        ("python -c 'print(1)'", "`python` without a script or module runs any code"),
        ("./build.sh", "`./build.sh` is not a program on PATH"),
        ("git -C sub status", "`git` is followed by `-C`, not a subcommand"),
        ("bash build.sh", "no rule can cover this command (the shell runs the script `build.sh`)"),
        ("echo hi > notes.txt", "no rule can cover this command (it writes to notes.txt)"),
        ('eval "$CMD"', "no rule can cover this command"),
    ],
)
def test_suggest_nothing_when_a_part_has_no_useful_rule(command: str, reason: str) -> None:
    suggestion = suggest_rules(terminal(command), WS)
    assert suggestion.rules == ()
    assert reason in suggestion.reason


def test_a_high_risk_action_gets_no_broad_rule() -> None:
    high = SecurityRisk.HIGH
    assert suggest_rules(terminal("curl https://x.example", high), WS).rules == ()
    assert "HIGH-risk" in suggest_rules(terminal("curl https://x.example", high), WS).reason
    narrow = suggest_rules(terminal("git push --force", high), WS)
    assert [r.command_prefix for r in narrow.rules] == ["git push"]


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("src/pkg/a.py", "src/pkg/**"),
        (f"{WS}/docs/x.md", "docs/**"),
        ("README.md", "**"),
        ("/etc/app.conf", "/etc/app.conf"),
    ],
)
def test_suggest_for_file_edits(path: str, glob: str) -> None:
    (rule,) = suggest_rules(edit(path), WS).rules
    assert rule.tool == "file_editor"
    assert rule.path_glob == glob
    assert rule.matches_path(path, WS)


def test_suggested_rule_allows_the_action_it_came_from() -> None:
    for action in (terminal("git status -s"), edit("src/pkg/a.py")):
        (suggested,) = suggest_rules(action, WS).rules
        assert verdict(policy(suggested), action) == "allow"


def test_suggest_with_workspace_scope_records_the_workspace() -> None:
    (rule,) = suggest_rules(terminal("git status"), WS, scope="workspace").rules
    assert rule.scope == "workspace"
    assert rule.workspace == WS
    (user_rule,) = suggest_rules(terminal("git status"), WS, scope="user").rules
    assert user_rule.workspace is None


def test_describe() -> None:
    assert allow("git status").describe() == "allow terminal `git status …` (this session)"
    assert (
        ApprovalRule(tool="*", decision="deny", scope="user").describe()
        == "deny every tool (always)"
    )
    scoped = ApprovalRule(tool="file_editor", path_glob="src/**", scope="workspace", workspace=WS)
    assert scoped.describe() == "allow file_editor on src/** (this workspace)"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tool": "terminal", "scope": "workspace"},
        {"tool": "terminal", "command_prefix": "   "},
        {"tool": "terminal", "command_prefix": "echo 'x"},
        {"tool": "file_editor", "path_glob": ""},
        {"tool": "terminal", "command_prefix": "ls", "path_glob": "**"},
        {"tool": ""},
        {"tool": "terminal", "decision": "maybe"},
        {"tool": "terminal", "scope": "forever"},
    ],
)
def test_invalid_rules_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ApprovalRule(**kwargs)


def test_rule_ids_are_unique_and_rules_frozen() -> None:
    a, b = allow("ls"), allow("ls")
    assert a.id != b.id
    with pytest.raises(ValidationError):
        a.decision = "deny"  # type: ignore[misc]


# --- managing rules ---------------------------------------------------------------------


def test_with_rule_and_without_rule() -> None:
    base = ApprovalRulesPolicy(fallback=AlwaysConfirm())
    first = allow("ls", id="r1")
    one = base.with_rule(first)
    assert base.rules == []  # copies, the original is untouched
    assert one.rules == [first]
    replaced = one.with_rule(deny("ls", id="r1"))
    assert [r.decision for r in replaced.rules] == ["deny"]
    two = replaced.with_rule(allow("pwd", id="r2"))
    assert [r.id for r in two.rules] == ["r1", "r2"]
    assert [r.id for r in two.without_rule("r1").rules] == ["r2"]
    assert two.without_rule("nope").rules == two.rules
    assert isinstance(two.fallback, AlwaysConfirm)


def test_with_scope_and_rules_in() -> None:
    session = allow("ls", scope="session")
    user = allow("pwd", scope="user")
    old_ws = allow("make", scope="workspace", workspace=WS)
    p = ApprovalRulesPolicy(rules=[session, user, old_ws])
    assert p.rules_in("user") == [user]
    assert p.rules_in("workspace") == [old_ws]

    new_ws = allow("npm test", scope="workspace", workspace=WS)
    stray = allow("rm", scope="user")  # not of the scope being replaced: ignored
    updated = p.with_scope("workspace", [new_ws, stray])
    assert updated.rules_in("workspace") == [new_ws]
    assert updated.rules_in("user") == [user]
    assert updated.rules_in("session") == [session]
    assert p.rules_in("workspace") == [old_ws]
    assert updated.with_scope("session", []).rules_in("session") == []


# --- through a conversation -------------------------------------------------------------


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def actions_of(conv: LocalConversation) -> list[ActionEvent]:
    return [e for e in conv.state.events if isinstance(e, ActionEvent)]


def test_rules_in_a_run_allow_deny_and_continue(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    (workspace / "keep").mkdir()
    conv = make_conversation()
    conv.set_confirmation_policy(policy(allow("touch"), deny("rm")))
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "rm -rf keep"}),
            ("terminal", {"command": "touch allowed.txt"}),
        ]
    )
    llm_server.reply_text("Done.")
    conv.send_message("tidy up")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "keep").is_dir()
    assert (workspace / "allowed.txt").exists()
    rm_action, touch_action = actions_of(conv)
    [rejection] = [e for e in conv.state.events if isinstance(e, UserRejectObservation)]
    assert rejection.action_id == rm_action.id
    assert "denied by rule" in rejection.rejection_reason
    assert "`rm …`" in rejection.rejection_reason
    [observation] = [e for e in conv.state.events if isinstance(e, ObservationEvent)]
    assert observation.action_id == touch_action.id

    tool_results = {
        m["tool_call_id"]: str(m["content"])
        for m in llm_server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    assert "denied by rule" in tool_results[rm_action.tool_call_id]


def test_unmatched_command_waits_while_denied_one_is_rejected(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(policy(allow("touch"), deny("rm")))
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "rm -f nothing.txt"}),
            ("terminal", {"command": "mkdir newdir"}),
        ]
    )
    conv.send_message("make a dir")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not (workspace / "newdir").exists()
    _, mkdir_action = actions_of(conv)
    assert [a.id for a in conv.state.get_unmatched_actions(conv.state.events)] == [mkdir_action.id]
    assert len([e for e in conv.state.events if isinstance(e, UserRejectObservation)]) == 1
    assert len(llm_server.requests) == 1


def test_allow_rule_does_not_wave_through_a_high_risk_variant(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(policy(allow("git push"), allow("touch")))
    conv.set_security_analyzer(PatternSecurityAnalyzer())
    llm_server.reply_tool_call("terminal", {"command": "touch ok.txt"})
    llm_server.reply_tool_call("terminal", {"command": "git push --force origin main"})
    conv.send_message("ship it")
    conv.run()

    assert (workspace / "ok.txt").exists()
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    touch_action, push_action = actions_of(conv)
    # Not shown to only read, and nothing makes it undoable: MEDIUM, which the rule allows.
    assert touch_action.security_risk is SecurityRisk.MEDIUM
    assert push_action.security_risk is SecurityRisk.HIGH
    assert "force-push" in (push_action.security_risk_reason or "")
    assert [a.id for a in conv.state.get_unmatched_actions(conv.state.events)] == [push_action.id]
    observed = {e.action_id for e in conv.state.events if isinstance(e, ObservationEvent)}
    assert observed == {touch_action.id}


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("echo $'\\'' ; touch PWNED #'", ("echo",)),
        ("echo ${x<<y}\ntouch PWNED\ny}", ("echo",)),
        ("BASH_CMDS[ls]=/usr/bin/touch; ls PWNED", ("ls",)),
        ("cat <<EOF\n$(touch PWNED)\nEOF", ("cat",)),
        ("find . -maxdepth 0 -fprint PWNED", ("find",)),
        ("git -c core.fsmonitor='touch PWNED #' status", ("git status",)),
    ],
)
def test_allow_rules_are_not_talked_around_in_a_run(
    make_conversation: Factory,
    llm_server: ScriptedLLMServer,
    workspace: Path,
    command: str,
    rules: tuple[str, ...],
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(
        ApprovalRulesPolicy(rules=[allow(r) for r in rules], fallback=AlwaysConfirm())
    )
    llm_server.reply_tool_call("terminal", {"command": command})
    conv.send_message("look around")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not (workspace / "PWNED").exists()
