"""Tests for listing, searching, finding, renaming and deleting saved conversations."""

from __future__ import annotations

import itertools
import sqlite3
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, timedelta
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    Conversation,
    Event,
    LocalConversation,
    Message,
    MessageEvent,
    MessageToolCall,
    TextContent,
)
from ohtui.sdk.conversation import (
    ConversationNotFoundError,
    EventLog,
    delete_conversation,
    find_conversation,
    list_conversations,
    rename_conversation,
    search_conversations,
)
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.tool.builtins.finish import FinishAction


@pytest.fixture
def store(persistence_dir: Path) -> Iterator[ConversationStore]:
    store = ConversationStore(persistence_dir)
    yield store
    store.close()


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def agent_says(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


def finish(text: str) -> ActionEvent:
    call = MessageToolCall(id=f"call_{uuid.uuid4().hex[:6]}", name="finish", arguments="{}")
    return ActionEvent(
        action=FinishAction(message=text),
        tool_name="finish",
        tool_call_id=call.id,
        tool_call=call,
        llm_response_id="resp",
    )


def add(
    store: ConversationStore,
    *events: Event,
    title: str | None = None,
    workspace: str = "/ws/a",
    status: str = "idle",
    cid: str | None = None,
) -> str:
    """Save a conversation cheaply, straight through the store; returns its id."""
    cid = cid or uuid.uuid4().hex
    key = store.create(
        cid,
        "{}",
        {"title": title, "status": status, "workspace": workspace, "model": "openai/m"},
    )
    log = EventLog(store, key)
    for event in events:
        log.append(event)
    return cid


def hit_ids(persistence_dir: Path, query: str, **kwargs: str) -> set[str]:
    return {h.summary.id for h in search_conversations(persistence_dir, query, **kwargs)}


def open_conversation(
    llm: LLM, workspace: Path, persistence_dir: Path, conversation_id: uuid.UUID | None = None
) -> LocalConversation:
    return Conversation(
        agent=Agent(llm=llm),
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )


# --- empty and missing directories -----------------------------------------------------------


def test_missing_directory_lists_nothing_and_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    assert list_conversations(missing) == []
    assert search_conversations(missing, "anything") == []
    with pytest.raises(ConversationNotFoundError, match="abc"):
        find_conversation(missing, "abc")
    with pytest.raises(ConversationNotFoundError):
        rename_conversation(missing, "abc", "t")
    with pytest.raises(ConversationNotFoundError):
        delete_conversation(missing, "abc")
    assert not missing.exists()


def test_empty_directory_lists_nothing(tmp_path: Path) -> None:
    assert list_conversations(tmp_path) == []
    assert search_conversations(tmp_path, "x") == []
    assert list(tmp_path.iterdir()) == []  # no database was created by looking


# --- summaries ----------------------------------------------------------------------------------


def test_summary_of_a_real_conversation(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    try:
        llm_server.reply_text("The capital is Paris.")
        conv.send_message("What is the capital of France?")
        conv.run()
        conv.state.title = "Capital of France"
        count = len(conv.state.events)
        cid = conv.id
    finally:
        conv.close()
    [summary] = list_conversations(persistence_dir)
    assert summary.id == cid.hex
    assert summary.title == "Capital of France"
    assert summary.first_user_message == "What is the capital of France?"
    assert summary.event_count == count == 3  # system prompt, user message, answer
    assert summary.status == "finished"
    assert summary.workspace == str(workspace.resolve())
    assert summary.model == "openai/test-model"
    assert summary.created_at.tzinfo is not None
    assert summary.created_at.utcoffset() == timedelta(0)
    assert summary.created_at <= summary.updated_at
    assert summary.updated_at - summary.created_at < timedelta(minutes=1)
    assert summary.created_at.astimezone(UTC).year >= 2024


def test_first_user_message_is_the_first_one_only(
    store: ConversationStore, persistence_dir: Path
) -> None:
    add(store, agent_says("hello, I am the agent"), user("first"), user("second"))
    [summary] = list_conversations(persistence_dir)
    assert summary.first_user_message == "first"
    assert summary.event_count == 3


def test_newest_first_and_limit(store: ConversationStore, persistence_dir: Path) -> None:
    a = add(store, user("a"))
    b = add(store, user("b"))
    c = add(store, user("c"))
    assert [s.id for s in list_conversations(persistence_dir)] == [c, b, a]
    EventLog(store, store.load(a).key).append(user("a again"))  # type: ignore[union-attr]
    assert [s.id for s in list_conversations(persistence_dir)] == [a, c, b]
    assert [s.id for s in list_conversations(persistence_dir, limit=2)] == [a, c]
    summaries = list_conversations(persistence_dir)
    assert all(x.updated_at >= y.updated_at for x, y in itertools.pairwise(summaries))


def test_filter_by_workspace(store: ConversationStore, persistence_dir: Path) -> None:
    a1 = add(store, user("a1"), workspace="/ws/a")
    b1 = add(store, user("b1"), workspace="/ws/b")
    a2 = add(store, user("a2"), workspace="/ws/a")
    assert [s.id for s in list_conversations(persistence_dir, workspace="/ws/a")] == [a2, a1]
    assert [s.id for s in list_conversations(persistence_dir, workspace="/ws/b")] == [b1]
    assert list_conversations(persistence_dir, workspace="/ws/none") == []


# --- full-text search -------------------------------------------------------------------------


def test_search_finds_user_agent_and_finish_messages(
    store: ConversationStore, persistence_dir: Path
) -> None:
    by_user = add(store, user("Please rename the ostrich module"))
    by_agent = add(store, user("hi"), agent_says("The pelican config looks fine"))
    by_finish = add(store, user("go"), finish("Renamed the flamingo class everywhere"))
    add(store, user("nothing to see"))
    assert hit_ids(persistence_dir, "ostrich") == {by_user}
    assert hit_ids(persistence_dir, "pelican") == {by_agent}
    assert hit_ids(persistence_dir, "flamingo") == {by_finish}
    assert hit_ids(persistence_dir, "zebra") == set()


def test_search_real_conversation_messages(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    try:
        llm_server.reply_tool_call("finish", {"message": "Tidied the walrus folder"})
        conv.send_message("Tidy the narwhal project")
        conv.run()
        llm_server.reply_text("The axolotl tests pass")
        conv.send_message("And the tests?")
        conv.run()
        cid = conv.id.hex
    finally:
        conv.close()
    for word in ("narwhal", "walrus", "axolotl"):
        assert hit_ids(persistence_dir, word) == {cid}, word


def test_search_needs_every_word_and_prefixes_the_last(
    store: ConversationStore, persistence_dir: Path
) -> None:
    pie = add(store, user("I baked a red apple pie"))
    car = add(store, user("My red car is fast"))
    assert hit_ids(persistence_dir, "red") == {pie, car}
    assert hit_ids(persistence_dir, "apple red") == {pie}
    assert hit_ids(persistence_dir, "RED Apple") == {pie}
    assert hit_ids(persistence_dir, "red ca") == {car}
    assert hit_ids(persistence_dir, "app") == {pie}
    assert hit_ids(persistence_dir, "red apple car") == set()


def test_search_snippet_highlights_the_match(
    store: ConversationStore, persistence_dir: Path
) -> None:
    add(store, user("the quick brown fox jumps over the lazy dog"))
    [hit] = search_conversations(persistence_dir, "fox")
    assert "[fox]" in hit.snippet


def test_search_reports_each_conversation_once(
    store: ConversationStore, persistence_dir: Path
) -> None:
    cid = add(store, user("kiwi one"), agent_says("kiwi two"), user("kiwi three"))
    hits = search_conversations(persistence_dir, "kiwi")
    assert [h.summary.id for h in hits] == [cid]


@pytest.mark.parametrize(
    ("query", "finds"),
    [
        ('foo" OR (', False),  # "OR" is a word to match like any other
        ('foo" (', True),
        ('"foo', True),
        ("foo*", True),
        ("bar)", True),
        ("NEAR(foo bar)", False),
        ("foo AND baz", False),
        ("foo:bar", True),
        ("col:foo", False),
        ("foo^", True),
        ("-foo", True),
        ('"', False),
        ("(", False),
        (")))", False),
        ("*", False),
        ("'; DROP TABLE conversations; --", False),
        ("100%", False),
        ("\\", False),
        ("   ", False),
        ("", False),
    ],
)
def test_search_is_safe_with_punctuation(
    store: ConversationStore, persistence_dir: Path, query: str, finds: bool
) -> None:
    cid = add(store, user("foo bar baz"))
    hits = search_conversations(persistence_dir, query)
    assert [h.summary.id for h in hits] == ([cid] if finds else [])
    assert [s.id for s in list_conversations(persistence_dir)] == [cid]


def test_search_finds_titles(store: ConversationStore, persistence_dir: Path) -> None:
    budget = add(store, title="Quarterly budget review")
    add(store, title="Holiday plans")
    assert hit_ids(persistence_dir, "budget") == {budget}
    assert hit_ids(persistence_dir, "review quarterly") == {budget}
    assert hit_ids(persistence_dir, "budget holiday") == set()
    [hit] = search_conversations(persistence_dir, "budget")
    assert hit.summary.title == "Quarterly budget review"


def test_title_search_treats_like_wildcards_literally(
    store: ConversationStore, persistence_dir: Path
) -> None:
    percent = add(store, title="100% coverage")
    add(store, title="1000 things")
    underscore = add(store, title="fix a_b")
    add(store, title="fix axb")
    assert hit_ids(persistence_dir, "100%") == {percent}
    assert hit_ids(persistence_dir, "a_b") == {underscore}


def test_search_by_workspace_and_limit(store: ConversationStore, persistence_dir: Path) -> None:
    in_a = add(store, user("llama facts"), workspace="/ws/a")
    in_b = add(store, user("llama trivia"), workspace="/ws/b", title="llama")
    assert hit_ids(persistence_dir, "llama") == {in_a, in_b}
    assert hit_ids(persistence_dir, "llama", workspace="/ws/a") == {in_a}
    assert hit_ids(persistence_dir, "llama", workspace="/ws/b") == {in_b}
    assert len(search_conversations(persistence_dir, "llama", limit=1)) == 1


# --- find by id prefix -------------------------------------------------------------------------


def test_find_by_unique_prefix(store: ConversationStore, persistence_dir: Path) -> None:
    one = add(store, cid="abcdef01" + "0" * 24)
    two = add(store, cid="abcdef02" + "1" * 24)
    assert find_conversation(persistence_dir, "abcdef01").id == one
    assert find_conversation(persistence_dir, "ABCDEF02").id == two
    dashed = str(uuid.UUID(hex=one))
    assert dashed[8] == "-"
    assert find_conversation(persistence_dir, dashed[:13]).id == one
    assert find_conversation(persistence_dir, dashed).id == one
    assert find_conversation(persistence_dir, one).id == one


def test_find_ambiguous_prefix_says_so(store: ConversationStore, persistence_dir: Path) -> None:
    one = add(store, cid="abcdef01" + "0" * 24)
    two = add(store, cid="abcdef02" + "1" * 24)
    with pytest.raises(ConversationNotFoundError, match="matches 2 conversations") as info:
        find_conversation(persistence_dir, "abcdef0")
    assert one[:12] in str(info.value)
    assert two[:12] in str(info.value)
    assert "type more" in str(info.value)


@pytest.mark.parametrize("prefix", ["ffff", "xyz", "", "-"])
def test_find_unknown_id(store: ConversationStore, persistence_dir: Path, prefix: str) -> None:
    add(store, cid="abcdef01" + "0" * 24)
    with pytest.raises(ConversationNotFoundError, match="No saved conversation") as info:
        find_conversation(persistence_dir, prefix)
    assert f"'{prefix}'" in str(info.value)


def test_find_ambiguous_prefix_counts_every_match(
    store: ConversationStore, persistence_dir: Path
) -> None:
    for i in range(30):
        add(store, cid=f"abc{i:029x}")
    with pytest.raises(ConversationNotFoundError, match="matches 30 conversations"):
        find_conversation(persistence_dir, "abc")


# --- rename and delete -------------------------------------------------------------------------


def test_rename_shows_in_listing_search_and_resumed_state(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    conv.state.title = "Old title"
    conv.state.events.append(user("hello"))
    cid = conv.id
    conv.close()

    rename_conversation(persistence_dir, cid.hex, "Shiny new title")
    [summary] = list_conversations(persistence_dir)
    assert summary.title == "Shiny new title"
    assert hit_ids(persistence_dir, "shiny") == {cid.hex}
    assert hit_ids(persistence_dir, "old") == set()
    resumed = open_conversation(llm, workspace, persistence_dir, conversation_id=cid)
    try:
        assert resumed.state.title == "Shiny new title"
        assert len(resumed.state.events) == 1
    finally:
        resumed.close()
    with pytest.raises(ConversationNotFoundError, match="0" * 32):
        rename_conversation(persistence_dir, "0" * 32, "x")


def test_delete_removes_events_search_rows_and_directory(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    ids = []
    for word in ("gazelle", "buffalo"):
        conv = open_conversation(llm, workspace, persistence_dir)
        conv.state.events.append(user(f"talk about the {word}"))
        obs_dir = conv.state.env_observation_persistence_dir
        assert obs_dir is not None
        Path(obs_dir).mkdir(parents=True)
        (Path(obs_dir) / "output.txt").write_text("saved output")
        ids.append(conv.id)
        conv.close()
    gone, kept = ids

    delete_conversation(persistence_dir, gone.hex)
    assert [s.id for s in list_conversations(persistence_dir)] == [kept.hex]
    assert hit_ids(persistence_dir, "gazelle") == set()
    assert hit_ids(persistence_dir, "buffalo") == {kept.hex}
    assert not (persistence_dir / gone.hex).exists()
    assert (persistence_dir / kept.hex / "observations" / "output.txt").is_file()
    with sqlite3.connect(persistence_dir / "conversations.db") as conn:
        [(events,)] = conn.execute("SELECT count(*) FROM events").fetchall()
        [(rows,)] = conn.execute("SELECT count(*) FROM message_search").fetchall()
    conn.close()
    assert (events, rows) == (1, 1)  # only the kept conversation's message

    with pytest.raises(ConversationNotFoundError):
        delete_conversation(persistence_dir, gone.hex)
    with pytest.raises(ConversationNotFoundError):
        find_conversation(persistence_dir, gone.hex)
    fresh = open_conversation(llm, workspace, persistence_dir, conversation_id=gone)
    try:
        assert len(fresh.state.events) == 0
        assert fresh.state.title is None
    finally:
        fresh.close()


def test_delete_refuses_path_like_ids(store: ConversationStore, persistence_dir: Path) -> None:
    add(store, user("keep me"))
    (persistence_dir / "sub").mkdir()
    for bad in ("..", ".", "sub", "../" + persistence_dir.name):
        with pytest.raises(ConversationNotFoundError):
            delete_conversation(persistence_dir, bad)
    assert (persistence_dir / "sub").is_dir()
    assert (persistence_dir / "conversations.db").is_file()
    assert len(list_conversations(persistence_dir)) == 1


# --- scale -----------------------------------------------------------------------------------


def test_thousand_conversations_list_quickly(
    store: ConversationStore, persistence_dir: Path
) -> None:
    # Durability is not what this test measures: let the setup skip the fsyncs.
    store._conn.execute("PRAGMA synchronous=OFF")
    for i in range(1000):
        key = store.create(
            uuid.uuid4().hex, "{}", {"title": f"Conversation {i}", "workspace": "/ws/a"}
        )
        EventLog(store, key).append(user(f"message number {i}"))
    started = time.perf_counter()
    summaries = list_conversations(persistence_dir)
    listed = time.perf_counter() - started
    started = time.perf_counter()
    hits = search_conversations(persistence_dir, "537")
    searched = time.perf_counter() - started
    print(
        f"1000 conversations: listed in {listed * 1e3:.1f} ms, searched in {searched * 1e3:.1f} ms"
    )
    assert len(summaries) == 1000
    assert summaries[0].title == "Conversation 999"
    assert summaries[-1].title == "Conversation 0"
    assert [h.summary.title for h in hits] == ["Conversation 537"]
    assert listed < 1.0
    assert searched < 1.0
