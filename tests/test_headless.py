"""`ohtui -p`: the real command line, engine and scripted LLM server, without the UI.

Most runs call `ohtui.cli.main` in this process (litellm is imported once); a few run the
installed command in a subprocess, to check what really reaches stdout, how fast --help is,
and what a second process does with a conversation the first one runs.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.cli import main
from ohtui.sdk.conversation import history_tail, list_conversations


@dataclass
class Result:
    """What one `ohtui` run gave."""

    code: int
    out: str
    err: str


Run = Callable[..., Result]


@pytest.fixture
def home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer, no_keyring: None
) -> Path:
    """An environment of its own: config, data and logs under tmp, the scripted model."""
    for name in ("OHTUI_MODEL", "OHTUI_BASE_URL", "OPENAI_API_KEY", "OHTUI_CONFIRM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OHTUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("OHTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OHTUI_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("OHTUI_MODEL", "openai/test-model")
    monkeypatch.setenv("OHTUI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OHTUI_API_KEY", "sk-test")
    monkeypatch.setenv("OHTUI_NUM_RETRIES", "0")
    (tmp_path / "config.toml").write_text('[ui]\ntheme = "nord"\n', encoding="utf-8")
    workspace = tmp_path / "project"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    return tmp_path


@pytest.fixture
def ohtui(home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run `ohtui ARGS` (with `stdin` text) in this process."""

    def run(*args: str, stdin: str | None = None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def test_prints_the_final_response_and_exits_0(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    llm_server.reply_tool_call(
        "terminal", {"command": "echo hi > made.txt", "security_risk": "LOW"}
    )
    llm_server.reply_tool_call("finish", {"message": "Made made.txt."})
    result = ohtui("-p", "make a file")
    assert result.code == 0, result.err
    assert result.out == "Made made.txt.\n"
    assert result.err == ""
    assert (home / "project" / "made.txt").read_text() == "hi\n"
    saved = list_conversations(home / "data" / "conversations")
    assert len(saved) == 1 and saved[0].status == "finished"


def test_json_streams_one_event_per_line_and_nothing_else(
    ohtui: Run, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_tool_call(
        "terminal", {"command": "echo from-the-tool", "security_risk": "LOW"}
    )
    llm_server.reply_text("All done.")
    result = ohtui("-p", "say hi", "--json")
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    [run] = [e for e in lines if e["kind"] == "HeadlessRun"]
    assert run["model"] == "openai/test-model"
    assert run["sandbox"]["mode"] == "workspace-write" and run["sandbox"]["network"] is False
    assert run["sandbox"]["problem"] is None
    events = [e for e in lines if e["kind"] != "HeadlessRun"]
    kinds = [e["kind"] for e in events]
    assert kinds.index("SystemPromptEvent") < kinds.index("MessageEvent")
    assert "ActionEvent" in kinds and "ObservationEvent" in kinds
    observation = next(e for e in events if e["kind"] == "ObservationEvent")
    assert "from-the-tool" in json.dumps(observation)
    message = [e for e in events if e["kind"] == "MessageEvent"]
    assert message[0]["source"] == "user" and message[-1]["source"] == "agent"
    assert all("id" in e and "timestamp" in e for e in events)


def test_the_task_can_come_on_stdin(ohtui: Run, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("Read it.")
    result = ohtui("-p", stdin="the task from a pipe\n")
    assert result.code == 0, result.err
    assert result.out == "Read it.\n"
    user = llm_server.requests[0]["messages"][-1]
    assert "the task from a pipe" in json.dumps(user)


def test_actions_needing_approval_are_rejected_with_a_reason_the_agent_reads(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "touch ran.txt"})
    llm_server.reply_text("I could not run it.")
    result = ohtui("-p", "touch a file", "--confirm", "always")
    assert result.code == 8, result.err
    assert "refused (risk LOW; needs approval): terminal: touch ran.txt" in result.err
    assert not (home / "project" / "ran.txt").exists()
    tool_message = llm_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "headless" in json.dumps(tool_message)
    assert result.out == "I could not run it.\n"


def test_yes_approves_them(ohtui: Run, llm_server: ScriptedLLMServer, home: Path) -> None:
    llm_server.reply_tool_call("terminal", {"command": "touch ran.txt", "security_risk": "HIGH"})
    llm_server.reply_text("Done.")
    result = ohtui("-p", "touch a file", "--confirm", "always", "--yes")
    assert result.code == 0, result.err
    assert (home / "project" / "ran.txt").exists()


def test_an_agent_that_keeps_asking_is_stopped_with_8(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    for i in range(12):
        llm_server.reply_tool_call("terminal", {"command": f"touch try{i}.txt"})
    result = ohtui("-p", "touch files", "--confirm", "always")
    assert result.code == 8
    assert result.err.count("refused (") == 10
    assert "keeps asking for actions that need approval" in result.err
    assert not list((home / "project").iterdir())


def test_resume_continues_a_saved_conversation(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    llm_server.reply_text("The secret word is kiwi.")
    assert ohtui("-p", "remember kiwi").code == 0
    (saved,) = list_conversations(home / "data" / "conversations")
    llm_server.reply_text("You said kiwi.")
    result = ohtui("-p", "what did I say?", "--resume", saved.id[:6])
    assert result.code == 0, result.err
    assert result.out == "You said kiwi.\n"
    history = json.dumps(llm_server.requests[-1]["messages"])
    assert "remember kiwi" in history and "The secret word is kiwi." in history
    assert len(list_conversations(home / "data" / "conversations")) == 1


def test_continue_picks_this_workspace_latest(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    llm_server.reply_text("First.")
    assert ohtui("-p", "one").code == 0
    llm_server.reply_text("Second.")
    result = ohtui("-p", "two", "--continue")
    assert result.code == 0, result.err
    assert "one" in json.dumps(llm_server.requests[-1]["messages"])


# --- exit codes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-p", "x", "--bogus"), "unrecognized arguments: --bogus"),
        (("--json",), "--json and --yes work with -p"),
        (("-p", "x", "--resume"), "--resume needs an id with -p"),
        (("-p", "   "), "the task is empty"),
        (("-p", "x", "--confirm", "sometimes"), "invalid choice: 'sometimes'"),
        (("-p", "x", "--resume", "a", "--continue"), "not allowed with argument"),
    ],
)
def test_usage_errors_exit_2(ohtui: Run, args: tuple[str, ...], message: str) -> None:
    result = ohtui(*args)
    assert result.code == 2
    assert message in result.err
    assert result.out == ""


def test_an_unknown_conversation_id_exits_2(ohtui: Run, llm_server: ScriptedLLMServer) -> None:
    result = ohtui("-p", "x", "--resume", "abc123")
    assert result.code == 2
    assert "No saved conversation has an id starting with 'abc123'" in result.err
    assert llm_server.requests == []


def test_an_invalid_config_value_warns_naming_file_line_and_key_and_runs_with_the_default(
    ohtui: Run, home: Path, llm_server: ScriptedLLMServer
) -> None:
    """A broken file never stops ohtui (the README's promise): stderr says what is wrong,
    the key takes its default, the rest of the file applies."""
    (home / "config.toml").write_text(
        '[llm]\ntemperature = "hot"\nmax_output_tokens = 77\n', encoding="utf-8"
    )
    llm_server.reply_text("Done.")
    result = ohtui("-p", "x")
    assert result.code == 0, result.err
    assert result.out == "Done.\n"
    assert (
        f"ohtui: warning: {home / 'config.toml'}, line 2: llm.temperature: expected a number"
        in result.err
    )
    (request,) = llm_server.requests
    assert "temperature" not in request  # the default: the provider's own
    assert request.get("max_tokens", request.get("max_completion_tokens")) == 77


def test_a_config_file_that_is_not_toml_warns_and_runs_with_the_defaults(
    ohtui: Run, home: Path, llm_server: ScriptedLLMServer
) -> None:
    (home / "config.toml").write_text("[llm\nmodel = \n", encoding="utf-8")
    llm_server.reply_text("Done.")
    result = ohtui("-p", "x")
    assert result.code == 0, result.err
    assert "warning:" in result.err and "this is not valid TOML" in result.err


def test_a_bad_environment_variable_exits_3(
    ohtui: Run, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    monkeypatch.setenv("OHTUI_MAX_ITERATIONS", "many")
    result = ohtui("-p", "x")
    assert result.code == 3
    assert "OHTUI_MAX_ITERATIONS: expected a whole number" in result.err


def test_no_model_exits_3(ohtui: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OHTUI_MODEL")
    result = ohtui("-p", "x")
    assert result.code == 3
    assert "No model is set" in result.err


def test_a_rejected_key_exits_4(ohtui: Run, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_error(401, "Incorrect API key provided")
    result = ohtui("-p", "x")
    assert result.code == 4
    assert "rejected the credentials" in result.err and "Check the API key" in result.err


def test_an_unreachable_server_exits_4(ohtui: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OHTUI_BASE_URL", "http://127.0.0.1:9/v1")  # discard: nothing listens
    result = ohtui("-p", "x")
    assert result.code == 4
    assert "Nothing is listening at" in result.err and "check the base URL" in result.err


def test_a_refused_request_exits_1(ohtui: Run, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_error(400, "Invalid value for 'messages'")
    result = ohtui("-p", "x")
    assert result.code == 1
    assert "refused the request" in result.err


def test_max_iterations_exits_5_naming_the_conversation_to_continue(
    ohtui: Run, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.setenv("OHTUI_MAX_ITERATIONS", "2")
    for i in range(3):
        llm_server.reply_tool_call("terminal", {"command": f"echo {i}", "security_risk": "LOW"})
    result = ohtui("-p", "loop")
    assert result.code == 5
    assert "max_iteration_per_run=2" in result.err
    (summary,) = list_conversations(home / "data" / "conversations")
    assert f'Continue with: ohtui --resume {summary.id} -p "' in result.err


def test_a_stuck_agent_exits_5(ohtui: Run, llm_server: ScriptedLLMServer, home: Path) -> None:
    llm_server.set_default(_same_call)
    result = ohtui("-p", "loop")
    assert result.code == 5
    assert "stuck" in result.err
    (summary,) = list_conversations(home / "data" / "conversations")
    assert f"ohtui --resume {summary.id} -p" in result.err


def _same_call(body: dict[str, Any]) -> Any:
    from llm_server import Reply, ToolCall

    return Reply(
        tool_calls=(
            ToolCall("terminal", json.dumps({"command": "echo same", "security_risk": "LOW"})),
        )
    )


# --- the installed command --------------------------------------------------------------


def test_the_command_keeps_stdout_for_json_only(
    home: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.reply_text("Hello from the model.")
    command = [sys.executable, "-m", "ohtui", "-p", "hi", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(json.loads(line)["kind"] for line in lines)
    assert json.loads(lines[-1])["kind"] in ("MessageEvent", "ConversationStateUpdateEvent")


def test_help_lists_everything_without_loading_the_engine() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ohtui", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for flag in ("-p", "--json", "--yes", "--resume", "--continue", "--config", "--confirm"):
        assert flag in done.stdout
    assert "exit codes: 0 finished" in done.stdout and "OHTUI_MODEL" in done.stdout
    probe = (
        "import sys; from ohtui.cli import build_parser; build_parser(); print(sorted(sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    for heavy in ("'litellm'", "'textual'", "'pydantic'", "'ohtui.sdk'", "'keyring'"):
        assert heavy not in loaded


def test_only_the_actions_needing_approval_are_rejected(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "touch safe.txt", "security_risk": "LOW"}),
            ("terminal", {"command": "rm -rf ~/precious", "security_risk": "LOW"}),
        ]
    )
    llm_server.reply_text("One of two.")
    result = ohtui("-p", "two things")
    assert result.code == 8, result.err
    assert (home / "project" / "safe.txt").exists()
    refusals = [line for line in result.err.splitlines() if "refused (" in line]
    assert len(refusals) == 1 and refusals[0].endswith("terminal: rm -rf ~/precious")
    assert "1 action needing approval was refused" in result.err and "--yes" in result.err
    assert result.out == "One of two.\n"
    calls = llm_server.requests[1]["messages"][-3]["tool_calls"]
    answers = {
        m["tool_call_id"]: json.dumps(m)
        for m in llm_server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    touch, remove = (answers[call["id"]] for call in calls)
    assert "headless" not in touch and "headless" in remove


def test_a_workspace_inside_a_file_exits_3(ohtui: Run, home: Path) -> None:
    blocker = home / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    result = ohtui("-p", "x", "-w", str(blocker / "sub"))
    assert result.code == 3
    assert result.err.startswith(f"ohtui: The workspace folder '{blocker / 'sub'}' does not exist")
    assert "Traceback" not in result.err


@pytest.mark.parametrize("headless", [True, False])
def test_a_workspace_that_does_not_exist_is_named_not_created(
    ohtui: Run, home: Path, llm_server: ScriptedLLMServer, headless: bool
) -> None:
    """-w with a mistyped folder: a clear error naming it (headless and the TUI, which does
    not even start), never a silent mkdir."""
    missing = home / "projet"
    result = ohtui(*(("-p", "x") if headless else ()), "-w", str(missing))
    assert result.code == 3
    assert f"The workspace folder '{missing}' does not exist" in result.err
    assert "mkdir -p" in result.err and "-w" in result.err
    assert not missing.exists()
    assert llm_server.requests == []


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "x=rm; $x -rf build",
        "eval 'rm -rf build'",
        "find build -delete",
        "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
    ],
)
def test_the_default_policy_asks_for_medium_risk_even_when_the_model_says_low(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, command: str
) -> None:
    build = home / "project" / "build"
    build.mkdir()
    (build / "keep.txt").write_text("precious", encoding="utf-8")
    llm_server.reply_tool_call("terminal", {"command": command, "security_risk": "LOW"})
    llm_server.reply_text("It needs your approval.")
    result = ohtui("-p", "clean the build")
    assert result.code == 8, result.err
    assert f"terminal: {command}" in result.err
    assert (build / "keep.txt").read_text(encoding="utf-8") == "precious"
    assert "headless" in json.dumps(llm_server.requests[1]["messages"][-1])


# --- keys never reach the agent ---------------------------------------------------------

LLM_KEY = "sk-ohtui-llm-key-5f4e3d2c1b0a99887766"
OTHER_KEYS = {
    "OPENAI_API_KEY": "sk-openai-env-key-1a2b3c4d5e6f7a8b",
    "ANTHROPIC_API_KEY": "sk-ant-env-key-9z8y7x6w5v4u3t2s",
    "AWS_SECRET_ACCESS_KEY": "aws/secret+access=key-0011223344",
}


def key_forms(value: str) -> list[str]:
    """A key and the encodings a command would print it in."""
    raw = value.encode()
    return [value, base64.b64encode(raw).decode()[:20], raw.hex()[:24], raw.hex().upper()[:24]]


def assert_no_key(*places: str | bytes) -> None:
    for place in places:
        text = place.decode("utf-8", "replace") if isinstance(place, bytes) else place
        for key in (LLM_KEY, *OTHER_KEYS.values()):
            for form in key_forms(key):
                assert form not in text, f"{form!r} (of {key!r}) leaked: {text[:300]!r}"


def stored_bytes(home: Path) -> bytes:
    """The database (with its write-ahead log) and the log files, as bytes."""
    paths = [home / "data" / "conversations" / f"conversations.db{s}" for s in ("", "-wal")]
    paths += sorted((home / "logs").glob("ohtui.log*"))
    data = b"".join(path.read_bytes() for path in paths if path.exists())
    assert b"SystemPromptEvent" in data  # the database really was read
    return data


PROBES = [
    "env",
    "printenv",
    "set",
    "declare -p",
    "export -p",
    "cat /proc/self/environ | tr '\\0' '\\n'",
    "python3 -c 'import os; print(os.environ)'",
    "echo $OHTUI_API_KEY $OPENAI_API_KEY | base64",
    'printf %s "$ANTHROPIC_API_KEY$AWS_SECRET_ACCESS_KEY" | xxd -p',
    "base64 .env; xxd -p .env",
    "python3 -c 'import urllib.parse as u; print(u.quote(open(\".env\").read()))'",
]


def test_no_command_or_file_gives_the_agent_a_key(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OHTUI_API_KEY", LLM_KEY)
    for name, value in OTHER_KEYS.items():
        monkeypatch.setenv(name, value)
    # The user's own .env, with the key in it, sits in the workspace.
    (home / "project" / ".env").write_text(f"OHTUI_API_KEY={LLM_KEY}\n")
    copy = home / "project" / "copy.txt"
    for probe in PROBES:
        llm_server.reply_tool_call("terminal", {"command": probe, "security_risk": "LOW"})
    llm_server.reply_tool_call(
        "file_editor",
        {"command": "create", "path": str(copy), "file_text": LLM_KEY, "security_risk": "LOW"},
    )
    llm_server.reply_tool_call(
        "file_editor", {"command": "view", "path": str(copy), "security_risk": "LOW"}
    )
    llm_server.reply_text(f"Found it: {LLM_KEY}")
    result = ohtui("-p", "find the API key", "--json", "--confirm", "never")
    assert result.code == 0, result.err
    observations = [e for e in map(json.loads, result.out.splitlines()) if "observation" in e]
    assert len(observations) == len(PROBES) + 2
    assert "<secret-hidden>" in result.out  # the .env and the copied file, masked
    assert_no_key(result.out, result.err, stored_bytes(home), json.dumps(llm_server.requests))


def test_an_error_echoing_the_key_is_masked_on_stderr(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OHTUI_API_KEY", LLM_KEY)
    llm_server.reply_error(401, f"Incorrect API key provided: {LLM_KEY}")
    result = ohtui("-p", "hi", "--json")
    assert result.code == 4
    assert "Incorrect API key provided: <secret-hidden>" in result.err
    assert_no_key(result.out, result.err, stored_bytes(home))


@pytest.fixture
def open_home(home: Path) -> Iterator[Path]:
    """A home any user can write to, for a run as an unprivileged user."""
    directory = Path(tempfile.mkdtemp(prefix="ohtui-keys-"))
    directory.chmod(0o777)
    (directory / "project").mkdir(mode=0o777)
    (directory / "project").chmod(0o777)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
def test_the_agent_cannot_read_ohtuis_own_environment_from_proc(
    open_home: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """ohtui's process keeps the keys it was started with in /proc/<pid>/environ, readable by
    any process of the same user unless ohtui makes itself non-dumpable; in the sandbox the
    agent does not even see ohtui's process."""
    if not sys.platform.startswith("linux"):
        pytest.skip("/proc and prctl are Linux's")
    command = [sys.executable, "-m", "ohtui", "-p", "read the environment", "--json"]
    # The probe is not shown to only read (`$PPID`): unconfined it would ask, so say yes.
    command += ["--sandbox", sandbox, "--yes"]
    if os.geteuid() == 0:  # root reads every /proc file: run as nobody
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop to an unprivileged user")
        command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    for name in ("OHTUI_CONFIG", "OHTUI_DATA_DIR", "OHTUI_LOG_DIR"):
        monkeypatch.setenv(name, str(open_home / name.lower()))
    monkeypatch.setenv("HOME", str(open_home))
    monkeypatch.setenv("OHTUI_API_KEY", LLM_KEY)
    for name, value in OTHER_KEYS.items():
        monkeypatch.setenv(name, value)
    probe = "cat /proc/$PPID/environ | tr '\\0' '\\n'; cat /proc/[0-9]*/environ | tr '\\0' '\\n'"
    llm_server.reply_tool_call("terminal", {"command": probe, "security_risk": "LOW"})
    llm_server.reply_text("Done.")
    done = subprocess.run(
        command, cwd=open_home / "project", capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    [observation] = [e for e in map(json.loads, done.stdout.splitlines()) if "observation" in e]
    if sandbox == "off":
        assert "Permission denied" in json.dumps(observation)
    assert_no_key(done.stdout, done.stderr)


# --- one process per conversation -------------------------------------------------------------


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_second_process_is_refused_until_the_first_dies_then_takes_over(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    project = home / "project"
    llm_server.reply_tool_call(
        "terminal",
        {"command": "echo $$ > shell.pid; echo 9 >> shared.txt; sleep 60", "security_risk": "LOW"},
    )
    first = subprocess.Popen(
        [sys.executable, "-m", "ohtui", "-p", "append 9 to shared.txt"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for((project / "shared.txt").exists, "the first run's command")
        wait_for(lambda: (project / "shell.pid").read_text().strip() != "", "the shell's pid")
        asked = len(llm_server.requests)

        refused = ohtui("-p", "go on", "--continue")
        assert refused.code == 6, refused.err
        assert f"pid {first.pid}" in refused.err and "started" in refused.err
        assert "Traceback" not in refused.err and refused.out == ""
        assert len(llm_server.requests) == asked  # the second process asked the model nothing

        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        llm_server.reply_text("The command was cut short; 9 is in shared.txt.")
        took_over = ohtui("-p", "go on", "--continue")
        assert took_over.code == 0, took_over.err
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate(timeout=30)
        shell = project / "shell.pid"
        if shell.exists() and shell.read_text().strip():
            with contextlib.suppress(ProcessLookupError):  # the orphaned shell and its sleep
                os.killpg(int(shell.read_text()), signal.SIGKILL)

    assert (project / "shared.txt").read_text() == "9\n"  # recorded once, ran once
    messages = llm_server.requests[-1]["messages"]
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert len(calls) == 1 and answered == calls  # no tool result lost
    (saved,) = list_conversations(home / "data" / "conversations")
    assert saved.held_by is None
    events, _ = history_tail(home / "data" / "conversations", saved.id, 100)
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "CheckpointEvent",  # taken before the command ran (the store is the conversation's)
        "AgentErrorEvent",
        "MessageEvent",
        "MessageEvent",
    ]


def test_sandbox_flag_confines_the_agent_and_json_reports_it(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    outside = home / "outside.txt"
    llm_server.reply_tool_call(
        "terminal", {"command": f"echo x > {outside}; echo y > inside.txt", "security_risk": "LOW"}
    )
    llm_server.reply_text("Done.")
    result = ohtui("-p", "write", "--json", "--sandbox", "workspace-write", "--confirm", "never")
    assert result.code == 0, result.err
    assert not outside.exists()  # home is under /tmp here: the sandbox's /tmp is private
    assert (home / "project" / "inside.txt").exists()
    [run] = [json.loads(x) for x in result.out.splitlines() if '"HeadlessRun"' in x]
    assert run["sandbox"]["mode"] == "workspace-write"


def test_without_bwrap_headless_says_so_and_runs_unconfined(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ohtui.sdk.sandbox import probe

    probe.cache_clear()
    monkeypatch.setenv("PATH", "/usr/local/nonexistent:/nonexistent")
    llm_server.reply_text("Hi.")
    try:
        result = ohtui("-p", "hello", "--json")
    finally:
        probe.cache_clear()
    assert result.code == 0, result.err
    assert "bubblewrap (bwrap) is not installed" in result.err
    assert "install bubblewrap" in result.err
    [run] = [json.loads(x) for x in result.out.splitlines() if '"HeadlessRun"' in x]
    assert run["sandbox"]["mode"] == "off"
    assert "not installed" in run["sandbox"]["problem"]


def test_mcp_servers_run_and_failures_and_untrusted_files_are_reported(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    from mcp_servers import ours, time_server

    config = home / "config.toml"
    servers = {"mcpServers": {"calc": ours("--name", "calc")}}
    (home / "project" / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    time_spec, broken = time_server(), ours("--crash-on-start")
    config.write_text(
        config.read_text(encoding="utf-8")
        + "\n[mcp.servers.time]\n"
        + f"command = {json.dumps(time_spec['command'])}\nargs = {json.dumps(time_spec['args'])}\n"
        + "\n[mcp.servers.broken]\n"
        + f"command = {json.dumps(broken['command'])}\nargs = {json.dumps(broken['args'])}\n",
        encoding="utf-8",
    )
    arguments = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}
    llm_server.reply_tool_call("time_convert_time", arguments)
    llm_server.reply_text("18:30 in Tokyo.")
    result = ohtui("-p", "Tokyo time?")
    assert result.code == 0, result.err
    assert result.out.strip() == "18:30 in Tokyo."
    assert ".mcp.json is not trusted" in result.err
    assert "MCP server 'broken' failed" in result.err
    assert "fatal: cannot open the database" in result.err
    tool_results = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert "Asia/Tokyo" in json.dumps(tool_results)
    names = {t["function"]["name"] for t in llm_server.requests[0]["tools"]}
    assert "time_convert_time" in names
    assert not any(name.endswith("_add") for name in names)  # the untrusted file's server is off


def test_a_project_file_naming_no_possible_file_is_only_a_warning(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    servers = {"mcpServers": {"srv": {"command": "srv", "args": ["--token=" + "a" * 300]}}}
    (home / "project" / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    llm_server.reply_text("Done.")
    result = ohtui("-p", "hello")
    assert result.code == 0, result.err
    assert ".mcp.json is not trusted" in result.err
    assert "unexpected error" not in result.err and "Traceback" not in result.err


def test_resuming_from_another_folder_uses_the_servers_of_the_conversation_workspace(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The servers trusted in one folder never start in the folder a resumed conversation
    works in: what is reviewed is the .mcp.json of that folder."""
    from mcp_servers import ours

    llm_server.reply_text("Saved.")
    assert ohtui("-p", "remember").code == 0
    (saved,) = list_conversations(home / "data" / "conversations")
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    servers = {"mcpServers": {"calc": ours("--name", "calc")}}
    (elsewhere / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    assert ohtui("trust", "--yes", "-w", str(elsewhere)).code == 0
    # the saved conversation's own folder holds a file of the same servers, never trusted
    (home / "project" / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    llm_server.reply_text("Resumed.")
    result = ohtui("-p", "go on", "--resume", saved.id)
    assert result.code == 0, result.err
    assert f"{home / 'project' / '.mcp.json'} is not trusted" in result.err
    names = {t["function"]["name"] for t in llm_server.requests[-1]["tools"]}
    assert not any(name.startswith("calc_") for name in names)


# --- what is printed cannot drive the terminal ------------------------------------------------

ESC = "\x1b"
TERMINAL_ATTACKS = (
    f"{ESC}]52;c;cm0gLXJmIH4K\x07",  # write the clipboard
    f"{ESC}[2J{ESC}[H",  # clear the screen
    f"{ESC}]0;pwned\x07",  # set the title
    f"{ESC}[21t",  # report the title back, as if typed
    f"{ESC}Ptmux;{ESC}{ESC}]52;c;eA==\x07{ESC}\\",  # through tmux
    "\x9b2J\x9d0;pwned\x9c",  # 8-bit CSI and OSC
    "report.txt\u202etxt.exe\u2066x\u2069",  # bidi override, isolate
    "all good\rFAILED",  # a lone CR overwriting the line
    "safe\b\b\b\bEVIL\x7f\x00",  # backspaces, DEL, NUL
)
ATTACK = " | ".join(TERMINAL_ATTACKS)


def _acts_on_the_terminal(text: str) -> list[str]:
    """The characters of `text` a terminal would act on (tab and newline aside)."""
    from ohtui.terminal_text import is_shown

    return sorted({c for c in text if not is_shown(c) and c not in "\n\t"})


def test_the_final_answer_cannot_drive_the_terminal(
    ohtui: Run, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_tool_call("finish", {"message": f"Done. {ATTACK}"})
    result = ohtui("-p", "do it")
    assert result.code == 0, result.err
    assert _acts_on_the_terminal(result.out) == []
    assert result.out.startswith("Done. ␛]52;c;cm0gLXJmIH4K␇ | ␛[2J␛[H | ␛]0;pwned␇")
    assert "all good␍FAILED" in result.out and "safe␈␈␈␈EVIL␡␀" in result.out
    assert "report.txt\ufffdtxt.exe" in result.out


def test_a_plain_text_answer_cannot_either(ohtui: Run, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text(f"Line one\r\nLine two {ATTACK}")
    result = ohtui("-p", "do it")
    assert result.code == 0, result.err
    assert result.out.startswith("Line one\nLine two ␛]52")  # CRLF is a line end
    assert _acts_on_the_terminal(result.out) == []


def test_problems_on_stderr_cannot_drive_the_terminal(
    ohtui: Run, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_error(400, f"Invalid value {ATTACK}")
    result = ohtui("-p", "do it")
    assert result.code == 1
    assert "Invalid value ␛]52;c;cm0gLXJmIH4K␇" in result.err
    assert _acts_on_the_terminal(result.err) == []


def test_json_keeps_the_text_escaped_and_the_same(
    ohtui: Run, llm_server: ScriptedLLMServer
) -> None:
    command = r"printf 'out \033]0;cmd\007 \302\233 \342\200\256 end\n'"
    llm_server.reply_tool_call("terminal", {"command": command, "security_risk": "LOW"})
    llm_server.reply_tool_call("finish", {"message": f"Done. {ATTACK}"})
    result = ohtui("-p", "do it", "--json")
    assert result.code == 0, result.err
    assert _acts_on_the_terminal(result.out) == []
    events = [json.loads(line) for line in result.out.splitlines()]
    observation = next(e for e in events if e["kind"] == "ObservationEvent")
    [output] = observation["observation"]["content"]
    assert output["text"].startswith("out \x1b]0;cmd\x07 \x9b \u202e end\n")
    finish = next(e for e in events if e["kind"] == "ActionEvent" and e["tool_name"] == "finish")
    assert finish["action"]["message"] == f"Done. {ATTACK}"


def test_the_command_line_s_own_errors_cannot_drive_the_terminal(ohtui: Run, home: Path) -> None:
    """The TUI's start-up error, printed before any UI: a folder name holding an escape."""
    missing = home / f"proj{ESC}]0;pwned\x07"
    result = ohtui("-w", str(missing))
    assert result.code == 3
    assert f"The workspace folder '{home}/proj␛]0;pwned␇' does not exist" in result.err
    assert _acts_on_the_terminal(result.err) == []


# --- invalid text from the model is repaired, never a crash ------------------------------------

LONE = "\ud800"
"""A lone surrogate: the scripted server sends it as JSON's "\\ud800" escape."""
FFFD = "\ufffd"
FINISH = ("finish", {"message": "Finished."})

SURROGATE_SCRIPTS: dict[str, list[tuple[str, Any]]] = {
    "the finish message": [("finish", {"message": f"Done {LONE}."})],
    "a text answer": [("text", f"Done {LONE}.")],
    "the reasoning": [("reasoning", f"Hmm {LONE}")],
    "a thought beside a call": [("thought", f"Let me look {LONE}"), FINISH],
    "a command": [("terminal", {"command": f"echo 'x{LONE}y'", "security_risk": "LOW"}), FINISH],
    "a tool's name": [(f"termi{LONE}nal", {"command": "ls"}), FINISH],
    "a think call": [("think", {"thought": f"{LONE} and \udfff"}), FINISH],
    "a plan": [("task_tracker", {"command": "plan", "task_list": [{"title": f"a{LONE}"}]}), FINISH],
    "a file written": [
        (
            "file_editor",
            {
                "command": "create",
                "path": "n.txt",
                "file_text": f"x{LONE}\n",
                "security_risk": "LOW",
            },
        ),
        FINISH,
    ],
    "the wrong way round": [("finish", {"message": "\ude00\ud83d"})],
}


def _script(llm_server: ScriptedLLMServer, steps: list[tuple[str, Any]]) -> None:
    for kind, value in steps:
        if kind == "text":
            llm_server.reply_text(value)
        elif kind == "reasoning":
            llm_server.reply_text("Done.", reasoning=value)
        elif kind == "thought":
            llm_server.reply_tool_call(
                "terminal", {"command": "true", "security_risk": "LOW"}, text=value
            )
        else:
            llm_server.reply_tool_call(kind, value)


@pytest.mark.parametrize("steps", SURROGATE_SCRIPTS.values(), ids=SURROGATE_SCRIPTS.keys())
@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_a_lone_surrogate_from_the_model_is_replaced_not_a_crash(
    ohtui: Run,
    llm_server: ScriptedLLMServer,
    home: Path,
    steps: list[tuple[str, Any]],
    json_output: bool,
) -> None:
    _script(llm_server, steps)
    result = ohtui("-p", "go", *(["--json"] if json_output else []))
    assert result.code == 0, result.err
    assert result.err == ""
    if json_output:
        events = [json.loads(line) for line in result.out.splitlines()]
        assert events
        json.dumps(events, ensure_ascii=False).encode("utf-8")  # no lone surrogate in any
    else:
        assert result.out.strip()
    # All of it was saved: the conversation resumes and the model reads its history back.
    llm_server.reply_text("Again.")
    again = ohtui("--continue", "-p", "go on")
    assert again.code == 0, again.err
    # (The model's own arguments go back as it wrote them: JSON text, its escapes and all.)
    history = json.dumps(llm_server.requests[-1]["messages"], ensure_ascii=False)
    assert LONE not in history


def test_the_finish_message_shows_the_replacement_character(
    ohtui: Run, llm_server: ScriptedLLMServer
) -> None:
    """The issue's case: `finish` with a lone surrogate ended the run with exit 1."""
    llm_server.reply_tool_call("finish", {"message": f"Done {LONE} (and 😀 as a pair)."})
    result = ohtui("-p", "go")
    assert result.code == 0, result.err
    assert result.out == f"Done {FFFD} (and 😀 as a pair).\n"


# --- file names that are not text ----------------------------------------------------------------


def _bad_folder(home: Path) -> Path:
    folder = home / "project" / "d"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/bad\xffname", "w"):
        pass
    (folder / "line\nbreak").write_text("")
    return folder


def test_a_view_of_a_folder_holding_a_name_that_is_not_utf8_works(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    folder = _bad_folder(home)
    llm_server.reply_tool_call("file_editor", {"command": "view", "path": "d"})
    llm_server.reply_tool_call("terminal", {"command": "ls d", "security_risk": "LOW"})
    llm_server.reply_tool_call("finish", {"message": "Listed."})
    result = ohtui("-p", "list d", "--json")
    assert result.code == 0, result.err
    events = [json.loads(line) for line in result.out.splitlines()]
    [view, ls] = [e for e in events if e["kind"] == "ObservationEvent"][:2]
    [listing] = view["observation"]["content"]
    assert rf"$'{folder}/bad\xffname'" in listing["text"].splitlines()
    assert rf"$'{folder}/line\nbreak'" in listing["text"].splitlines()
    [printed] = ls["observation"]["content"]
    assert f"bad{FFFD}name" in printed["text"]  # the terminal's bytes, read as text


def test_a_conversation_the_old_crash_left_behind_resumes(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saved the way today's main leaves it (the view's answer could not be saved: the run
    failed, and every resume re-ran the view and failed again), it resumes now."""
    from llm_server import Reply, ToolCall

    import ohtui.sdk.conversation.state as state_module
    import ohtui.sdk.tools.file_editor.editor as editor_module

    folder = _bad_folder(home)

    def old_listing(root: Path, *args: Any, **kwargs: Any) -> str:
        return "\n".join(e.path for e in os.scandir(root))  # names as os decodes them

    llm_server.reply_tool_call("file_editor", {"command": "view", "path": "d"})
    with monkeypatch.context() as old:
        old.setattr(editor_module, "list_directory", old_listing)
        old.setattr(state_module, "valid_model", lambda event: event)
        crashed = ohtui("-p", "list d")
    assert crashed.code == 1
    assert "Error serializing to JSON" in crashed.err

    llm_server.set_default(Reply(tool_calls=(ToolCall("finish", '{"message": "Listed."}'),)))
    result = ohtui("--continue", "-p", "go on")
    assert result.code == 0, result.err
    assert result.out == "Listed.\n"
    [saved] = list_conversations(home / "data" / "conversations")
    assert saved.status == "finished"
    again = ohtui("--continue", "-p", "and again")
    assert again.code == 0, again.err
    history = json.dumps(llm_server.requests[-1]["messages"], ensure_ascii=False)
    assert json.dumps(rf"$'{folder}/bad\xffname'")[1:-1] in history  # the view, re-run


def test_a_workspace_whose_name_is_not_utf8_is_refused_in_words(ohtui: Run, home: Path) -> None:
    workspace = os.fsdecode(os.fsencode(home) + b"/proj\xff")
    os.mkdir(workspace)
    for args in (("-p", "x"), ("-p", "x", "--json")):
        result = ohtui(*args, "-w", workspace)
        assert result.code == 3
        assert rf"ohtui cannot work in $'{home}/proj\xff': its name is not UTF-8 text" in result.err
        assert "Traceback" not in result.err


def test_an_untrusted_plugin_is_refused_until_ohtui_trust_trusts_it(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    plugin = home / "plugins" / "logger"
    (plugin / "hooks").mkdir(parents=True)
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ran >> log"}]}]}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    config = home / "config.toml"
    config.write_text(f"[agent]\nplugins = [{json.dumps(str(plugin))}]\n" + config.read_text())
    log = home / "project" / "log"

    refused = ohtui("-p", "hello")
    assert refused.code == 3, refused.err
    assert f"plugin logger ({plugin}) is not trusted." in refused.err
    assert "  UserPromptSubmit: $ echo ran >> log" in refused.err
    assert "`ohtui trust`" in refused.err
    assert not log.exists() and llm_server.requests == []

    asked = ohtui("trust")  # no terminal to ask on
    assert asked.code == 1 and "pass --yes to trust it" in asked.out
    assert "UserPromptSubmit: $ echo ran >> log" in asked.out
    trusted = ohtui("trust", "--yes")
    assert trusted.code == 0 and "plugin logger: trusted." in trusted.out

    llm_server.reply_text("Hi.")
    ran = ohtui("-p", "hello")
    assert ran.code == 0, ran.err
    assert log.read_text() == "ran\n"  # its hook ran (in the sandbox, in the workspace)


def test_a_plugin_inside_the_workspace_is_refused_even_once_trusted(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    """The agent may edit the workspace: a plugin there could be changed after its review."""
    plugin = home / "project" / "tools" / "logger"
    (plugin / "hooks").mkdir(parents=True)
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ran >> log"}]}]}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    config = home / "config.toml"
    config.write_text(f"[agent]\nplugins = [{json.dumps(str(plugin))}]\n" + config.read_text())
    trusting = ohtui("trust", "--yes")
    assert trusting.code == 1 and "inside the workspace" in trusting.out
    refused = ohtui("-p", "hello")
    assert refused.code == 3, refused.err
    assert f"plugin logger ({plugin}) is inside the workspace" in refused.err
    assert not (home / "project" / "log").exists() and llm_server.requests == []


def test_ohtui_trust_trusts_the_project_servers_a_headless_run_then_uses(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    from mcp_servers import ours

    servers = {"mcpServers": {"calc": ours(env={"MODE": "${MODE_SECRET}"})}}
    (home / "project" / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    untrusted = ohtui("trust")
    assert untrusted.code == 1
    assert "calc: runs in the sandbox (workspace-write, no network)" in untrusted.out
    assert "env MODE='${MODE_SECRET}'  ← your secret MODE_SECRET (not set)" in untrusted.out
    assert ohtui("trust", "--yes").code == 0
    assert "trusted, as it is." in ohtui("trust").out
    del servers["mcpServers"]["calc"]["env"]
    (home / "project" / ".mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    changed = ohtui("trust")
    assert changed.code == 1 and "  - calc: its environment changed" in changed.out
    assert ohtui("trust", "--yes").code == 0
    llm_server.reply_tool_call("calc_add", {"a": 2, "b": 3})
    llm_server.reply_text("5.")
    result = ohtui("-p", "add")
    assert result.code == 0, result.err
    tool_results = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_results and tool_results[0]["content"] in ("5", [{"type": "text", "text": "5"}])


# --- checkpoints: --undo and --checkpoints -----------------------------------------------------


def test_undo_walks_the_workspace_back_one_action_at_a_time(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    project = home / "project"
    (project / "keep.txt").write_text("kept\n", encoding="utf-8")
    for command in ("echo one > a.txt", "echo two > a.txt", "echo new > b.txt"):
        llm_server.reply_tool_call("terminal", {"command": command, "security_risk": "LOW"})
    llm_server.reply_tool_call("finish", {"message": "Done."})
    assert ohtui("-p", "write files").code == 0
    requests = len(llm_server.requests)

    listed = ohtui("--checkpoints", "--continue")
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("* ") and lines[0].endswith("echo new > b.txt")
    assert lines[2].endswith("echo one > a.txt") and not lines[1].startswith("*")

    first = ohtui("--undo", "--continue")
    assert first.code == 0, first.err
    assert first.out.splitlines()[0] == "deleted   b.txt"
    assert "Restored the workspace before `echo new > b.txt`" in first.out
    assert not (project / "b.txt").exists()
    assert (project / "a.txt").read_text() == "two\n"

    # The restore is taken back with the command it prints, then undone again.
    take_back = first.out.rsplit("To take it back: ", 1)[1].split()
    assert take_back[0] == "ohtui" and "--restore" in take_back
    again = ohtui(*take_back[1:])
    assert again.code == 0, again.err
    assert (project / "b.txt").read_text() == "new\n"
    unknown = ohtui("--restore", "ffff", "--continue")
    assert unknown.code == 2 and "no checkpoint 'ffff'" in unknown.err
    assert ohtui("--undo", "--continue").code == 0
    assert not (project / "b.txt").exists()

    second = ohtui("--undo", "--continue", "--json")
    assert second.code == 0, second.err
    (restored,) = [json.loads(line) for line in second.out.splitlines()]
    assert restored["kind"] == "CheckpointRestoreEvent" and restored["label"] == "echo two > a.txt"
    assert restored["changes"] == [{"path": "a.txt", "status": "modified"}]
    assert (project / "a.txt").read_text() == "one\n"

    assert ohtui("--undo", "--continue").code == 0
    assert not (project / "a.txt").exists()
    nothing = ohtui("--undo", "--continue")
    assert nothing.code == 7 and nothing.out == ""
    assert "nothing to undo" in nothing.err
    assert (project / "keep.txt").read_text() == "kept\n"  # never touched
    assert len(llm_server.requests) == requests  # no agent turn


def test_undo_with_nothing_done_exits_7(ohtui: Run, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("Nothing to do.")
    assert ohtui("-p", "hello").code == 0
    result = ohtui("--undo", "--continue")
    assert result.code == 7 and "nothing to undo" in result.err
    listed = ohtui("--checkpoints", "--continue", "--json")
    assert listed.code == 0
    assert json.loads(listed.out)["items"] == []


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--undo",), 2, "--undo needs the conversation: --resume ID or --continue"),
        (("--undo", "--resume"), 2, "--undo needs the conversation"),
        (("--undo", "-p", "x", "--continue"), 2, "--undo runs no agent turn"),
        (("--undo", "--checkpoints", "--continue"), 2, "not allowed with argument"),
        (("--restore", " ", "--continue"), 2, "--restore needs a checkpoint id"),
        (("--restore", "abcd"), 2, "--restore needs the conversation"),
        (("--undo", "--resume", "abc123"), 2, "No saved conversation has an id starting with"),
        (("--checkpoints", "--continue"), 3, "No saved conversation in"),
    ],
)
def test_undo_usage_and_unknown_conversations(
    ohtui: Run, args: tuple[str, ...], code: int, message: str
) -> None:
    result = ohtui(*args)
    assert result.code == code
    assert message in result.err
    assert result.out == ""


def test_refused_actions_are_listed_in_json_with_their_reason(
    ohtui: Run, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_tool_call(
        "terminal", {"command": "rm -rf ~/precious", "security_risk": "HIGH"}
    )
    llm_server.reply_text("Could not.")
    result = ohtui("-p", "clean up", "--json")
    assert result.code == 8, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    [refusal] = [e for e in lines if e["kind"] == "HeadlessRefused"]
    assert refusal["tool_name"] == "terminal" and refusal["action"] == "rm -rf ~/precious"
    assert refusal["security_risk"] == "HIGH" and refusal["reason"]
    assert any(e["kind"] == "ActionEvent" and e["id"] == refusal["action_id"] for e in lines)
    assert "refused (" in result.err


def test_with_yes_nothing_is_refused_and_the_run_exits_0(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    llm_server.reply_tool_call(
        "terminal", {"command": "echo x > /tmp/ohtui-yes-probe", "security_risk": "HIGH"}
    )
    llm_server.reply_text("Done.")
    result = ohtui("-p", "write it", "--yes")
    assert result.code == 0, result.err
    assert "refused" not in result.err


def test_a_model_server_refusing_on_this_machine_fails_in_seconds(home: Path) -> None:
    """Nothing listens at the base URL: no 30 s of backoff (the default four retries), and
    the direct path's error is read without importing litellm (seconds on a loaded box)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "OHTUI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    env.pop("OHTUI_NUM_RETRIES", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ohtui", "-p", "hi"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert time.monotonic() - started < 20
    assert done.returncode == 4, done.stderr
    assert f"Nothing is listening at http://127.0.0.1:{port}/v1" in done.stderr
    assert "Traceback" not in done.stderr
