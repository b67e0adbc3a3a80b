"""`ohtui -p` on the conversation tree: `--fork ID` (at HEAD, or `--at EVENT_ID`) and
`--resume ID --at EVENT_ID`, with the real command line, engine and scripted LLM server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import test_headless
from llm_server import ScriptedLLMServer
from test_headless import Run

from ohtui.sdk.conversation import history_tail, list_conversations

# The fixtures of test_headless.
home = test_headless.home
ohtui = test_headless.ohtui


def _events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def _run_line(out: str) -> dict[str, Any]:
    """The HeadlessRun line of a --json run."""
    [run] = [e for e in _events(out) if e["kind"] == "HeadlessRun"]
    return run


def _agent_reply_id(out: str, text: str) -> str:
    """The id of the agent's message saying `text`, in a --json run's output."""
    return next(
        e["id"]
        for e in _events(out)
        if e["kind"] == "MessageEvent" and e["source"] == "agent" and text in json.dumps(e)
    )


def _said(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"])


def _two_turns(ohtui: Run, llm_server: ScriptedLLMServer) -> tuple[str, str]:
    """A saved conversation of two turns; (its id, the id of the first turn's reply)."""
    llm_server.reply_text("The word is kiwi.")
    first = ohtui("-p", "remember kiwi", "--json")
    assert first.code == 0, first.err
    run = _run_line(first.out)
    llm_server.reply_text("Now it is mango.")
    assert ohtui("-p", "change it to mango", "--continue").code == 0
    return run["conversation_id"], _agent_reply_id(first.out, "kiwi")


def test_fork_runs_the_task_in_a_new_conversation_and_leaves_the_original(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    source, _ = _two_turns(ohtui, llm_server)
    llm_server.reply_text("In the fork: mango.")
    result = ohtui("-p", "which word?", "--fork", source[:6], "--json")
    assert result.code == 0, result.err
    run = _run_line(result.out)
    assert run["forked_from"] == source
    assert run["forked_at"] is None
    fork = run["conversation_id"]
    assert fork != source
    said = _said(llm_server.requests[-1])
    assert "remember kiwi" in said and "Now it is mango." in said and "which word?" in said
    saved = {s.id: s for s in list_conversations(home / "data" / "conversations")}
    assert set(saved) == {source, fork}
    assert saved[fork].forked_from == source
    source_events, _ = history_tail(home / "data" / "conversations", source, 1000)
    assert "which word?" not in json.dumps([e.model_dump(mode="json") for e in source_events])

    llm_server.reply_text("Still the fork.")
    text = ohtui("-p", "and now?", "--fork", fork)
    assert text.code == 0, text.err
    assert text.out == "Still the fork.\n"
    [line] = text.err.splitlines()
    assert line.startswith(f"ohtui: forked conversation {fork} as ")
    assert line.endswith(")") and "--resume" in line
    assert len(list_conversations(home / "data" / "conversations")) == 3


def test_fork_at_an_event_keeps_only_the_branch_up_to_it(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    source, kiwi_reply = _two_turns(ohtui, llm_server)
    llm_server.reply_text("Kiwi, in the fork.")
    result = ohtui("-p", "which word?", "--fork", source, "--at", kiwi_reply, "--json")
    assert result.code == 0, result.err
    run = _run_line(result.out)
    assert (run["forked_from"], run["forked_at"]) == (source, kiwi_reply)
    said = _said(llm_server.requests[-1])
    assert "remember kiwi" in said and "The word is kiwi." in said
    assert "mango" not in said
    saved = {s.id: s for s in list_conversations(home / "data" / "conversations")}
    assert saved[run["conversation_id"]].forked_at == kiwi_reply


def test_resume_at_an_event_runs_on_a_new_branch_and_keeps_the_old_one(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    source, kiwi_reply = _two_turns(ohtui, llm_server)
    llm_server.reply_text("Back at kiwi.")
    result = ohtui("-p", "which word?", "--resume", source[:8], "--at", kiwi_reply)
    assert result.code == 0, result.err
    assert result.out == "Back at kiwi.\n"
    said = _said(llm_server.requests[-1])
    assert "remember kiwi" in said and "The word is kiwi." in said and "which word?" in said
    assert "mango" not in said  # the other branch is not in the model's context
    events, _ = history_tail(home / "data" / "conversations", source, 1000)
    kept = json.dumps([e.model_dump(mode="json") for e in events])
    assert "Now it is mango." in kept and "Back at kiwi." in kept  # both branches saved
    [question] = [e for e in events if "which word?" in json.dumps(e.model_dump(mode="json"))]
    [mango] = [e for e in events if "change it to mango" in json.dumps(e.model_dump(mode="json"))]
    assert question.parent_id == mango.parent_id == kiwi_reply  # siblings

    llm_server.reply_text("Still kiwi.")
    assert ohtui("-p", "and now?", "--continue").code == 0
    said = _said(llm_server.requests[-1])
    assert "Back at kiwi." in said and "mango" not in said  # HEAD stayed on the new branch


def test_an_unknown_conversation_exits_2_for_fork_as_for_resume(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path
) -> None:
    result = ohtui("-p", "x", "--fork", "abc123")
    assert result.code == 2
    assert "No saved conversation has an id starting with 'abc123'" in result.err
    assert "Traceback" not in result.err and result.out == ""
    assert llm_server.requests == []


@pytest.mark.parametrize("flag", ["--fork", "--resume"])
def test_an_unknown_event_exits_2_and_changes_nothing(
    ohtui: Run, llm_server: ScriptedLLMServer, home: Path, flag: str
) -> None:
    source, _ = _two_turns(ohtui, llm_server)
    asked = len(llm_server.requests)
    result = ohtui("-p", "x", flag, source, "--at", "no-such-event")
    assert result.code == 2, result.err
    assert f"conversation {source} has no event 'no-such-event'" in result.err
    assert "--at takes the full id of one of its events" in result.err
    assert "Traceback" not in result.err and result.out == ""
    assert len(llm_server.requests) == asked
    saved = list_conversations(home / "data" / "conversations")
    assert [s.id for s in saved] == [source]  # no fork made
    llm_server.reply_text("Mango.")
    assert ohtui("-p", "which?", "--continue").code == 0  # HEAD where it was
    assert "Now it is mango." in _said(llm_server.requests[-1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-p", "x", "--at", "e1"), "--at names an event of a conversation: use it with"),
        (("-p", "x", "--continue", "--at", "e1"), "--at names an event of a conversation"),
        (("-p", "x", "--resume", "--at", "e1"), "--at names an event of a conversation"),
        (("--resume", "abc", "--at", "e1"), "--at works with -p (a headless run)"),
        (("--fork", "abc"), "--fork works with -p (a headless run)"),
        (("-p", "x", "--fork", "a", "--continue"), "not allowed with argument"),
        (("-p", "x", "--fork", "a", "--resume", "b"), "not allowed with argument"),
        (("-p", "x", "--fork", "a", "--at", " "), "--at needs an event id"),
        (("-p", "x", "--fork", " "), "--fork needs the id of a saved conversation"),
        (("--undo", "--fork", "a"), "--fork works with -p"),
    ],
)
def test_tree_flags_misused_exit_2(
    ohtui: Run, llm_server: ScriptedLLMServer, args: tuple[str, ...], message: str
) -> None:
    result = ohtui(*args)
    assert result.code == 2
    assert message in result.err
    assert result.out == "" and llm_server.requests == []


def test_help_documents_the_flags_and_their_exit_codes(ohtui: Run) -> None:
    result = ohtui("--help")
    assert result.code == 0
    flat = " ".join(result.out.split())
    assert "--fork ID" in flat and "--at EVENT_ID" in flat
    assert "2 usage, an unknown conversation (--resume, --fork) or event (--at)" in flat
