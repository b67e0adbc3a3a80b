"""Reading a stored log by kind without parsing it: the user's messages (their text read out of
the rows by SQLite) and the events of given kinds (the checkpoints) say exactly what parsing
every event says, on the whole log and on a branch of it; rewinding's list of turns too."""

from __future__ import annotations

from pathlib import Path

from ohtui.sdk import (
    LLM,
    Agent,
    ImageContent,
    LocalConversation,
    Message,
    MessageEvent,
    TextContent,
    Tool,
)
from ohtui.sdk.conversation.event_store import EventsListBase
from ohtui.sdk.conversation.rewind import user_turns
from ohtui.sdk.event.checkpoint import CheckpointEvent, CheckpointRestoreEvent, checkpoints_in


def _user(*parts: TextContent | ImageContent) -> MessageEvent:
    return MessageEvent(source="user", llm_message=Message(role="user", content=list(parts)))


def _agent(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


def test_stored_reads_by_kind_match_the_parsed_log(tmp_path: Path) -> None:
    llm = LLM(model="openai/test-model", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=tmp_path / "ws",
        persistence_dir=tmp_path / "data",
        visualizer=None,
    )
    try:
        append = conversation.state.append_event
        append(_user(TextContent(text='  first: «ünïcode» "quoted"\n')))
        append(_agent("one"))
        append(CheckpointEvent(checkpoint_id="c1", label="echo 1", files=3))
        fork_point = append(_agent("two"))
        append(
            _user(
                TextContent(text="two parts, "),
                ImageContent(image_urls=["data:image/png;base64,AA=="]),
                TextContent(text="joined"),
            )
        )
        append(CheckpointRestoreEvent(checkpoint_id="c1", label="", undo_checkpoint_id="c2"))
        append(CheckpointEvent(checkpoint_id="c2", label="before", files=3))
        conversation.navigate_to(fork_point.id)  # a second branch from there
        append(_user(TextContent(text="the other way")))
        append(CheckpointEvent(checkpoint_id="c3", label="echo 3", files=4))

        log = conversation.state.events
        parsed = EventsListBase.user_messages(log)
        assert log.user_messages() == parsed
        assert [text for *_, text in parsed] == [
            '  first: «ünïcode» "quoted"\n',
            "two parts, joined",
            "the other way",
        ]
        kinds = ("CheckpointEvent", "CheckpointRestoreEvent")
        assert log.kind_indexes(*kinds) == EventsListBase.kind_indexes(log, *kinds)

        branch = conversation.state.active_branch()
        assert [c.checkpoint_id for c in checkpoints_in(branch)] == ["c3", "c1"]
        assert [c.checkpoint_id for c in checkpoints_in(list(branch))] == ["c3", "c1"]
        assert [c.checkpoint_id for c in checkpoints_in(log)] == ["c3", "c2", "c1"]
        turns = user_turns(branch)
        assert [(t.number, t.text) for t in turns] == [
            (2, "the other way"),
            (1, 'first: «ünïcode» "quoted"'),
        ]
        assert [branch[t.position].id for t in turns] == [t.event_id for t in turns]
    finally:
        conversation.close()
