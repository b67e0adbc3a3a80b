"""Tests for secrets: the SecretRegistry, the Cipher, and secrets in real conversations.

A secret is exported only to the terminal commands that name it, masked as
`<secret-hidden>` everywhere it could show (observations, messages, streamed tokens, side
answers, titles, saved output files, the database), and saved redacted or, with a cipher,
encrypted. Conversations talk to the scripted LLM server over real HTTP through litellm and
run commands in a real bash.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ohtui.sdk import (
    LLM,
    Agent,
    AgentContext,
    Cipher,
    Conversation,
    ConversationExecutionStatus,
    LLMStreamChunk,
    LocalConversation,
    MessageEvent,
    ObservationEvent,
    SecretRegistry,
    Tool,
)
from ohtui.sdk.conversation import (
    SECRET_MASK,
    LookupSecret,
    SecretsUnavailableWarning,
    StaticSecret,
)
from ohtui.sdk.conversation.secret_registry import SecretMaskingFilter, StreamMasker
from ohtui.sdk.event.base import Event
from ohtui.sdk.tools.terminal import TerminalObservation

Status = ConversationExecutionStatus
T = TypeVar("T")
TOKEN = "tok-7f3a9c1e5b2d"
MASK = "<secret-hidden>"
Factory = Callable[..., LocalConversation]


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each); closes any still open at the end."""
    made: list[LocalConversation] = []

    def make(agent_llm: LLM | None = None, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        agent = Agent(llm=agent_llm or llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent, workspace=workspace, persistence_dir=persistence_dir, **kwargs
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def of_type(events: Any, cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


def observations(conv: LocalConversation) -> list[TerminalObservation]:
    found = []
    for event in of_type(conv.state.events, ObservationEvent):
        assert isinstance(event.observation, TerminalObservation)
        found.append(event.observation)
    return found


def stored_json(conv: LocalConversation) -> str:
    return "\n".join(e.model_dump_json() for e in conv.state.events)


def db_bytes(persistence_dir: Path) -> bytes:
    """The raw bytes of the database and its journal files."""
    data = b""
    for suffix in ("", "-wal", "-journal", "-shm"):
        path = persistence_dir / f"conversations.db{suffix}"
        if path.exists():
            data += path.read_bytes()
    assert data, f"no database under {persistence_dir}"
    return data


def run_commands(conv: LocalConversation, llm_server: Any, *commands: str) -> None:
    for command in commands:
        llm_server.reply_tool_call("terminal", {"command": command})
    llm_server.reply_text("Done.")
    conv.send_message("Run the commands")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED


# --- SecretRegistry ----------------------------------------------------------------------


def test_secret_mask_constant() -> None:
    assert SECRET_MASK == MASK


def test_callables_are_called_only_when_a_command_names_the_key() -> None:
    calls: list[str] = []

    def lookup() -> str:
        calls.append("called")
        return "looked-up-value"

    registry = SecretRegistry()
    registry.update_secrets({"LAZY": lookup, "STATIC": "static-value"})
    assert calls == []
    assert isinstance(registry.secret_sources["LAZY"], LookupSecret)
    assert isinstance(registry.secret_sources["STATIC"], StaticSecret)

    assert registry.get_secrets_as_env_vars("ls -la && echo $STATIC") == {"STATIC": "static-value"}
    assert calls == []
    assert registry.get_secrets_as_env_vars("curl -H $LAZY") == {"LAZY": "looked-up-value"}
    assert calls == ["called"]
    assert registry.get_secrets_as_env_vars("echo ${LAZY} $STATIC") == {
        "LAZY": "looked-up-value",
        "STATIC": "static-value",
    }
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("command", "exported"),
    [
        ("echo $KEY", {"KEY"}),
        ("echo ${KEY}", {"KEY"}),
        ("echo KEY", {"KEY"}),
        ("KEY=1 run", {"KEY"}),
        ('curl -H "X: $KEY"', {"KEY"}),
        ("echo $KEY2", set()),
        ("echo $MY_KEY", set()),
        ("echo KEYS", set()),
        ("echo $key", set()),
        ("echo keyboard", set()),
        ("npm run get-key", set()),
        ("echo nothing", set()),
        ("echo $KEY and $OTHER", {"KEY", "OTHER"}),
    ],
)
def test_a_command_gets_only_the_secrets_it_names_as_shell_words(
    command: str, exported: set[str]
) -> None:
    registry = SecretRegistry()
    registry.update_secrets({"KEY": "value-1", "OTHER": "value-2", "UNUSED": "value-3"})
    assert set(registry.get_secrets_as_env_vars(command)) == exported


def test_find_secrets_in_text_finds_mentions_in_any_case_but_exports_none_of_them() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"API_KEY": "value-1", "API": "value-2", "TOKEN": "value-3"})
    text = "echo $api_key; npm run get-token"
    assert registry.find_secrets_in_text(text) == {"API_KEY", "API", "TOKEN"}
    assert registry.get_secrets_as_env_vars(text) == {}


def test_get_secrets_as_env_vars_returns_only_referenced_keys() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"A_KEY": "aaa-value", "B_KEY": "bbb-value", "C_KEY": "ccc-value"})
    assert registry.get_secrets_as_env_vars("echo $B_KEY") == {"B_KEY": "bbb-value"}
    assert registry.get_secrets_as_env_vars("echo $A_KEY ${C_KEY}") == {
        "A_KEY": "aaa-value",
        "C_KEY": "ccc-value",
    }
    assert registry.get_secrets_as_env_vars("echo none") == {}


def test_mask_secrets_in_output_replaces_every_known_value() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"ONE": "first-secret", "TWO": "second-secret"})
    text = "a first-secret b second-secret c first-secret"
    assert registry.mask_secrets_in_output(text) == f"a {MASK} b {MASK} c {MASK}"
    assert registry.mask_secrets_in_output("nothing here") == "nothing here"


def test_overlapping_values_are_masked_without_leftovers() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"SHORT": "abc123", "LONG": "abc123-extended"})
    masked = registry.mask_secrets_in_output("x abc123-extended y abc123")
    assert masked == f"x {MASK} y {MASK}"


def test_values_shorter_than_four_characters_are_not_masked() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"TINY": "abc", "OK": "abcd"})
    assert registry.mask_secrets_in_output("abc abcd") == f"abc {MASK}"
    # Still exported when referenced.
    assert registry.get_secrets_as_env_vars("echo $TINY") == {"TINY": "abc"}


def test_a_value_a_callable_returned_stays_masked_after_it_fails_or_changes() -> None:
    values = iter(["first-lookup", "second-lookup"])

    def rotating() -> str:
        value = next(values, None)
        if value is None:
            raise RuntimeError("the vault is down")
        return value

    registry = SecretRegistry()
    registry.update_secrets({"ROT": rotating})
    assert registry.get_secrets_as_env_vars("echo $ROT") == {"ROT": "first-lookup"}
    assert registry.get_secrets_as_env_vars("echo $ROT") == {"ROT": "second-lookup"}
    # The callable now fails: no export, no exception, and both old values stay masked.
    assert registry.get_secrets_as_env_vars("echo $ROT") == {}
    text = "old first-lookup new second-lookup"
    assert registry.mask_secrets_in_output(text) == f"old {MASK} new {MASK}"


def test_values_handed_out_are_recorded_by_name_and_masked() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"TOKEN": lambda: "looked-up-token", "FIXED": "fixed-value"})
    assert registry._exported_values == {}  # a fixed value is masked, but not handed out
    assert registry.get_secret_value("TOKEN") == "looked-up-token"
    assert registry.get_secret_value("MISSING") is None
    assert registry._exported_values == {"TOKEN": "looked-up-token"}
    assert registry.mask_secrets_in_output("a looked-up-token b") == f"a {MASK} b"


def test_tracked_values_skip_empty_ones_and_are_not_saved() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"GH": "github_pat_VALUE123"})
    registry.track_exported_values({"REAL": "tracked-value", "EMPTY": ""})
    assert registry._exported_values == {"REAL": "tracked-value"}
    assert registry.mask_secrets_in_output("hello") == "hello"
    assert registry.mask_secrets_in_output("x tracked-value") == f"x {MASK}"
    restored = SecretRegistry.model_validate_json(
        registry.model_dump_json(context={"expose_secrets": True})
    )
    assert restored._exported_values == {}
    assert restored.mask_secrets_in_output("url github_pat_VALUE123") == f"url {MASK}"


def test_replacing_a_static_value_keeps_masking_the_old_one() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"KEY": "old-value"})
    registry.update_secrets({"KEY": "new-value"})
    assert registry.get_secrets_as_env_vars("echo $KEY") == {"KEY": "new-value"}
    assert registry.mask_secrets_in_output("old-value new-value") == f"{MASK} {MASK}"


@pytest.mark.parametrize("name", ["", "1ABC", "A-B", "A B", "$KEY", "KEY=1", "ключ"])
def test_invalid_secret_names_are_rejected(name: str) -> None:
    registry = SecretRegistry()
    with pytest.raises(ValueError, match="secret name"):
        registry.update_secrets({name: "some-value"})
    assert registry.secret_sources == {}


def test_a_secret_must_be_a_string_a_source_or_a_callable() -> None:
    registry = SecretRegistry()
    with pytest.raises(TypeError, match="KEY"):
        registry.update_secrets({"KEY": 12345})  # type: ignore[dict-item]


def test_mask_data_masks_free_text_values_but_not_keys_or_identifiers() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"QUOTED": 'pa"ss\\word', "WORD": "user"})
    data = json.loads(
        json.dumps(
            {
                "source": "user",
                "text": 'the value is pa"ss\\word, said the user',
                "parts": [{"type": "text", "text": "user"}],
            }
        )
    )
    assert registry.mask_data(data) == {
        "source": "user",
        "text": f"the value is {MASK}, said the {MASK}",
        "parts": [{"type": "text", "text": MASK}],
    }


def test_stream_masker_masks_a_value_split_across_pieces() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"API_TOKEN": TOKEN})
    masker = StreamMasker(registry)
    pieces = ["The token is tok-", "7f3a", "9c1e5b", "2d, keep it safe. to", "k"]
    shown = [masker.feed(piece) for piece in pieces]
    shown.append(masker.flush())
    joined = "".join(shown)
    assert joined == f"The token is {MASK}, keep it safe. tok"
    for piece in shown:
        assert "7f3a" not in piece


def test_secret_masking_filter_masks_log_records(caplog: pytest.LogCaptureFixture) -> None:
    registry = SecretRegistry()
    registry.update_secrets({"API_TOKEN": TOKEN})
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "token=%s", (TOKEN,), None)
    assert SecretMaskingFilter(registry).filter(record) is True
    assert record.getMessage() == f"token={MASK}"

    logger = logging.getLogger(f"test-secrets-{uuid.uuid4().hex}")
    logger.addFilter(SecretMaskingFilter(registry))
    with caplog.at_level(logging.INFO, logger=logger.name):
        logger.info("calling with %s and %s", TOKEN, "public")
    [logged] = [r for r in caplog.records if r.name == logger.name]
    assert logged.getMessage() == f"calling with {MASK} and public"
    assert TOKEN not in caplog.text


def test_secret_masking_filter_masks_tracebacks_and_stacks(tmp_path: Path) -> None:
    registry = SecretRegistry()
    registry.update_secrets({"API_TOKEN": TOKEN})
    log_file = tmp_path / "app.log"
    handler = logging.FileHandler(log_file)
    handler.addFilter(SecretMaskingFilter(registry))
    logger = logging.getLogger(f"test-secrets-{uuid.uuid4().hex}")
    logger.addHandler(handler)
    try:
        try:
            raise RuntimeError(f"the server said: bad key {TOKEN}")
        except RuntimeError:
            logger.exception("the call failed", stack_info=True)
    finally:
        logger.removeHandler(handler)
        handler.close()
    logged = log_file.read_text()
    assert f"the server said: bad key {MASK}" in logged
    assert "Stack (most recent call last)" in logged
    assert TOKEN not in logged


def test_registry_serialization_redacts_without_a_cipher() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"API_TOKEN": TOKEN})
    dumped = registry.model_dump_json()
    assert TOKEN not in dumped
    restored = SecretRegistry.model_validate_json(dumped)
    assert restored.secret_sources["API_TOKEN"].get_value() is None
    assert restored.unavailable == {}
    exposed = registry.model_dump_json(context={"expose_secrets": True})
    assert TOKEN in exposed


def test_registry_serialization_encrypts_with_a_cipher() -> None:
    cipher = Cipher(Cipher.generate_key())
    registry = SecretRegistry()
    registry.update_secrets({"API_TOKEN": TOKEN})
    dumped = registry.model_dump_json(context={"cipher": cipher})
    assert TOKEN not in dumped
    assert json.loads(dumped)["secret_sources"]["API_TOKEN"]["encrypted_value"]
    restored = SecretRegistry.model_validate_json(dumped, context={"cipher": cipher})
    assert restored.secret_sources["API_TOKEN"].get_value() == TOKEN
    assert restored.mask_secrets_in_output(TOKEN) == MASK


@pytest.mark.parametrize("other", [None, "another passphrase"])
def test_registry_restored_without_the_cipher_warns_and_has_no_values(other: str | None) -> None:
    cipher = Cipher("the right passphrase")
    registry = SecretRegistry()
    registry.update_secrets({"API_TOKEN": TOKEN, "OTHER_KEY": "other-value"})
    dumped = registry.model_dump_json(context={"cipher": cipher})
    context = {"cipher": Cipher(other) if other else None}
    with pytest.warns(SecretsUnavailableWarning, match="API_TOKEN") as caught:
        restored = SecretRegistry.model_validate_json(dumped, context=context)
    assert len(caught) == 1
    assert "OTHER_KEY" in str(caught[0].message)
    assert set(restored.unavailable) == {"API_TOKEN", "OTHER_KEY"}
    assert restored.secret_sources["API_TOKEN"].get_value() is None
    assert restored.get_secrets_as_env_vars("echo $API_TOKEN") == {}
    # Setting the secret again makes it available.
    restored.update_secrets({"API_TOKEN": TOKEN})
    assert set(restored.unavailable) == {"OTHER_KEY"}


# --- secrets in a conversation: the terminal ---------------------------------------------


def test_a_command_naming_the_secret_gets_it_and_others_do_not(
    make_conversation, llm_server, workspace
) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    run_commands(
        conv,
        llm_server,
        f'test "$API_TOKEN" = "{TOKEN}" && echo SAME',
        "env | grep -c '^API_TOK' ; compgen -v | grep -c '^API_TOK'",
        "echo $API_TOKEN > saved.txt; echo written",
    )
    same, absent, written = observations(conv)
    assert same.exit_code == 0
    assert "SAME" in same.text
    # Neither exported nor left as a shell variable after the command that used it.
    assert absent.text.split("\n")[:2] == ["0", "0"]
    assert written.exit_code == 0
    assert (workspace / "saved.txt").read_text() == TOKEN + "\n"


def test_a_command_that_does_not_name_the_secret_never_sees_it(
    make_conversation, llm_server
) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    run_commands(conv, llm_server, "env | grep -c '^API_TOK'")
    [observation] = observations(conv)
    assert observation.text.split("\n")[0] == "0"


def test_the_secret_is_masked_in_the_observation(make_conversation, llm_server) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    run_commands(conv, llm_server, "echo value=$API_TOKEN")
    [observation] = observations(conv)
    assert f"value={MASK}" in observation.text
    assert TOKEN not in observation.text
    assert TOKEN not in stored_json(conv)
    # The model is sent the masked observation.
    assert TOKEN not in json.dumps(llm_server.requests)
    assert f"value={MASK}" in json.dumps(llm_server.requests[1])


def test_a_looked_up_value_is_masked_where_no_command_named_it_and_exported_only_where_one_did(
    make_conversation, llm_server, workspace
) -> None:
    calls: list[int] = []

    def lookup() -> str:
        calls.append(1)
        return "looked-up-7788"

    # The value reaches the output without any command naming the secret.
    (workspace / "remote.txt").write_text("https://looked-up-7788@git.example.com/repo\n")
    conv = make_conversation(secrets={"LAZY_TOKEN": lookup})
    run_commands(conv, llm_server, "cat remote.txt; env | grep -c '^LAZY_TOK'")
    [shown] = observations(conv)
    assert shown.text.split("\n")[:2] == [f"https://{MASK}@git.example.com/repo", "0"]
    assert "looked-up-7788" not in stored_json(conv)
    assert calls == [1]  # masking fetched it, once

    run_commands(conv, llm_server, 'test "$LAZY_TOKEN" = looked-up-7788 && echo $LAZY_TOKEN')
    assert calls == [1, 1]  # and the command that names it gets it fresh
    last = observations(conv)[-1]
    assert last.exit_code == 0
    assert last.text.split("\n")[0] == MASK


def test_update_secrets_on_a_running_conversation(make_conversation, llm_server) -> None:
    conv = make_conversation()
    conv.update_secrets({"LATER_KEY": "added-later-1234"})
    run_commands(conv, llm_server, 'test "$LATER_KEY" = added-later-1234 && echo $LATER_KEY')
    [observation] = observations(conv)
    assert observation.exit_code == 0
    assert MASK in observation.text
    assert "added-later-1234" not in stored_json(conv)


def test_huge_output_is_truncated_and_its_saved_file_is_masked(
    make_conversation, llm_server
) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    run_commands(conv, llm_server, "yes $API_TOKEN | head -c 100000")
    [observation] = observations(conv)
    assert observation.truncated is True
    assert observation.full_output_path is not None
    saved = Path(observation.full_output_path).read_bytes()
    assert TOKEN.encode() not in saved
    assert saved.count(MASK.encode()) > 1000
    assert TOKEN not in observation.text
    assert MASK in observation.text
    # The cut-off part of the secret at the end of the 100000 bytes must not leak either.
    assert TOKEN not in stored_json(conv)


def test_a_truncated_output_never_shows_pieces_of_a_value_it_printed_whole(
    make_conversation, llm_server
) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    # Every line printed is the whole value; the second command shifts where the cut falls.
    run_commands(
        conv,
        llm_server,
        "yes $API_TOKEN | head -n 6000",
        "echo a; yes $API_TOKEN | head -n 6000",
    )
    for observation in observations(conv):
        assert observation.truncated is True
        shown = {
            line
            for line in observation.text.split("\n")
            if line and not (line.startswith("[") and line.endswith("]"))
        }
        assert shown <= {MASK, "a"}, sorted(shown - {MASK, "a"})


def test_a_file_editor_view_of_a_file_holding_the_value_is_masked(
    make_conversation, llm_server, workspace
) -> None:
    (workspace / "config.env").write_text(f"API_TOKEN={TOKEN}\n")
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    llm_server.reply_tool_call(
        "file_editor", {"command": "view", "path": str(workspace / "config.env")}
    )
    llm_server.reply_text("Seen.")
    conv.send_message("Look at the config")
    conv.run()
    [event] = of_type(conv.state.events, ObservationEvent)
    assert f"API_TOKEN={MASK}" in event.observation.text
    assert TOKEN not in stored_json(conv)
    assert TOKEN not in json.dumps(llm_server.requests)


# --- secrets in a conversation: messages, tokens, side answers, titles -------------------


def test_agent_and_user_messages_are_masked_when_stored(make_conversation, llm_server) -> None:
    received: list[Event] = []
    conv = make_conversation(secrets={"API_TOKEN": TOKEN}, callbacks=[received.append])
    llm_server.reply_text(f"Your token is {TOKEN}.")
    conv.send_message(f"Remember that my token is {TOKEN}")
    conv.run()

    user, agent = of_type(conv.state.events, MessageEvent)
    assert user.text == f"Remember that my token is {MASK}"
    assert agent.text == f"Your token is {MASK}."
    assert TOKEN not in stored_json(conv)
    assert TOKEN not in "\n".join(e.model_dump_json() for e in received)
    # The model never got the value: the user message was masked before it was sent.
    assert TOKEN not in json.dumps(llm_server.requests)


def test_streamed_tokens_never_show_the_value(make_conversation, llm_server, llm) -> None:
    chunks = ["Here: tok-7f", "3a9c", "1e5b2d and ", "again tok-7f3a9c1e5b2d", " end"]
    text = "".join(chunks)
    assert text.count(TOKEN) == 2
    llm_server.reply_text(text, chunks=chunks)
    received: list[LLMStreamChunk] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}),
        token_callbacks=[received.append],
        secrets={"API_TOKEN": TOKEN},
    )
    conv.send_message("Show me")
    conv.run()

    assert llm_server.requests[0]["stream"] is True
    joined = "".join(chunk.content for chunk in received)
    assert joined == f"Here: {MASK} and again {MASK} end"
    assert all("3a9c" not in chunk.content for chunk in received)
    [agent] = [e for e in of_type(conv.state.events, MessageEvent) if e.source == "agent"]
    assert agent.text == f"Here: {MASK} and again {MASK} end"


def test_streamed_reasoning_never_shows_the_value(make_conversation, llm_server, llm) -> None:
    llm_server.reply_text("Answer.", reasoning=f"thinking {TOKEN} here")
    received: list[LLMStreamChunk] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}),
        token_callbacks=[received.append],
        secrets={"API_TOKEN": TOKEN},
    )
    conv.send_message("Show me")
    conv.run()
    reasoning = "".join(c.reasoning_content for c in received)
    assert reasoning == f"thinking {MASK} here"
    assert "".join(c.content for c in received) == "Answer."
    assert TOKEN not in stored_json(conv)


def test_streamed_text_ending_with_part_of_a_value_is_released_at_the_end(
    make_conversation, llm_server, llm
) -> None:
    chunks = ["one ", "tok-7f3a9c1e5b2d", " two tok-", "7f"]
    llm_server.reply_text("".join(chunks), chunks=chunks)
    llm_server.reply_text("Hello again", chunks=["Hello", " again"])
    received: list[LLMStreamChunk] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}),
        token_callbacks=[received.append],
        secrets={"API_TOKEN": TOKEN},
    )
    conv.send_message("Show me")
    conv.run()
    first = "".join(c.content for c in received)
    received.clear()
    conv.send_message("And again")
    conv.run()
    second = "".join(c.content for c in received)
    # What the token callbacks showed matches the stored messages.
    stored = [e.text for e in of_type(conv.state.events, MessageEvent) if e.source == "agent"]
    assert stored == [f"one {MASK} two tok-7f", "Hello again"]
    assert (first, second) == (f"one {MASK} two tok-7f", "Hello again")


def test_streamed_tool_call_arguments_never_show_the_value(
    make_conversation, llm_server, llm
) -> None:
    llm_server.reply_tool_call("terminal", {"command": f"echo {TOKEN}"})
    llm_server.reply_text("Done.")
    received: list[LLMStreamChunk] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}),
        token_callbacks=[received.append],
        secrets={"API_TOKEN": TOKEN},
    )
    conv.send_message("Echo it")
    conv.run()
    arguments = "".join(d.arguments for c in received for d in c.tool_calls)
    assert TOKEN not in arguments
    assert json.loads(arguments) == {"command": f"echo {MASK}"}
    assert TOKEN not in stored_json(conv)


def test_ask_agent_answers_are_masked(make_conversation, llm_server) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    llm_server.reply_text(f"The token is {TOKEN}")
    assert conv.ask_agent("What is the token?") == f"The token is {MASK}"


def test_generated_titles_are_masked(make_conversation, llm_server) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    conv.send_message("Deploy with my token")
    llm_server.reply_text(f"Deploy {TOKEN}")
    title = conv.generate_title()
    assert title == f"Deploy {MASK}"
    assert TOKEN not in title


# --- secrets at rest ---------------------------------------------------------------------


@pytest.mark.parametrize("use_cipher", [False, True], ids=["no-cipher", "cipher"])
def test_the_database_never_contains_the_value(
    make_conversation, llm_server, llm, persistence_dir, use_cipher
) -> None:
    cipher = Cipher(Cipher.generate_key()) if use_cipher else None
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}),
        secrets={"API_TOKEN": TOKEN, "LAZY_KEY": lambda: "lazy-secret-8642"},
        cipher=cipher,
    )
    llm_server.reply_tool_call(
        "terminal", {"command": "echo $API_TOKEN $LAZY_KEY; echo also " + TOKEN}
    )
    llm_server.reply_tool_call("terminal", {"command": "yes $API_TOKEN | head -c 100000"})
    llm_server.reply_text(
        f"The token was {TOKEN}", chunks=[f"The token was {TOKEN[:5]}", TOKEN[5:]]
    )
    conv.send_message(f"Use {TOKEN} for everything")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    llm_server.reply_text(f"It was {TOKEN}")
    assert conv.ask_agent("again?") == f"It was {MASK}"
    conv.update_secrets({"SECOND_KEY": "second-secret-4455"})
    saved_files = [o.full_output_path for o in observations(conv) if o.full_output_path]
    assert saved_files
    conv.close()

    data = db_bytes(persistence_dir)
    assert TOKEN.encode() not in data
    assert b"second-secret-4455" not in data
    assert b"lazy-secret-8642" not in data
    assert MASK.encode() in data  # the events are there, masked
    for path in saved_files:
        assert TOKEN.encode() not in Path(path).read_bytes()
    for path in persistence_dir.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_without_a_cipher_secrets_come_back_empty(
    make_conversation, llm_server, persistence_dir
) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN})
    conversation_id = conv.id
    run_commands(conv, llm_server, f'test "$API_TOKEN" = "{TOKEN}" && echo SAME')
    assert "SAME" in observations(conv)[0].text
    conv.close()

    resumed = make_conversation(conversation_id=conversation_id)
    registry = resumed.state.secret_registry
    assert list(registry.secret_sources) == ["API_TOKEN"]
    assert registry.secret_sources["API_TOKEN"].get_value() is None
    assert registry.unavailable == {}
    run_commands(resumed, llm_server, 'test -z "$API_TOKEN" && echo EMPTY')
    assert "EMPTY" in observations(resumed)[-1].text


def test_with_a_cipher_secrets_come_back_on_resume(
    make_conversation, llm_server, persistence_dir
) -> None:
    key = Cipher.generate_key()
    conv = make_conversation(secrets={"API_TOKEN": TOKEN}, cipher=Cipher(key))
    conversation_id = conv.id
    conv.send_message("hello")
    conv.close()
    assert TOKEN.encode() not in db_bytes(persistence_dir)

    resumed = make_conversation(conversation_id=conversation_id, cipher=Cipher(key))
    assert resumed.state.secret_registry.secret_sources["API_TOKEN"].get_value() == TOKEN
    run_commands(resumed, llm_server, f'test "$API_TOKEN" = "{TOKEN}" && echo SAME $API_TOKEN')
    observation = observations(resumed)[-1]
    assert observation.exit_code == 0
    assert f"SAME {MASK}" in observation.text
    resumed.close()
    assert TOKEN.encode() not in db_bytes(persistence_dir)


@pytest.mark.parametrize("other_key", [False, True], ids=["no-cipher", "wrong-key"])
def test_loading_with_the_wrong_cipher_warns_and_never_raises(
    make_conversation, llm_server, other_key
) -> None:
    conv = make_conversation(secrets={"API_TOKEN": TOKEN}, cipher=Cipher(Cipher.generate_key()))
    conversation_id = conv.id
    conv.send_message("hello")
    conv.close()

    cipher = Cipher(Cipher.generate_key()) if other_key else None
    with pytest.warns(SecretsUnavailableWarning, match="API_TOKEN"):
        resumed = make_conversation(conversation_id=conversation_id, cipher=cipher)
    registry = resumed.state.secret_registry
    assert "API_TOKEN" in registry.unavailable
    assert registry.secret_sources["API_TOKEN"].get_value() is None
    run_commands(resumed, llm_server, 'test -z "$API_TOKEN" && echo EMPTY')
    assert "EMPTY" in observations(resumed)[-1].text
    # Setting it again makes it usable and available.
    resumed.update_secrets({"API_TOKEN": "fresh-value-9911"})
    assert "API_TOKEN" not in resumed.state.secret_registry.unavailable
    run_commands(resumed, llm_server, 'test "$API_TOKEN" = fresh-value-9911 && echo FRESH')
    assert "FRESH" in observations(resumed)[-1].text


def test_a_lookup_secret_is_not_saved_and_resume_does_not_fail(
    make_conversation, llm_server, persistence_dir
) -> None:
    calls: list[int] = []

    def lookup() -> str:
        calls.append(1)
        return "lookup-value-5566"

    key = Cipher.generate_key()
    conv = make_conversation(secrets={"LAZY_KEY": lookup}, cipher=Cipher(key))
    conversation_id = conv.id
    # The command does not spell the value: the model does not know it.
    run_commands(conv, llm_server, 'test "${#LAZY_KEY}" = 17 && echo "GOT $LAZY_KEY"')
    assert f"GOT {MASK}" in observations(conv)[-1].text
    assert calls == [1, 1]  # masking's fetch, then the command's
    conv.close()
    assert b"lookup-value-5566" not in db_bytes(persistence_dir)

    resumed = make_conversation(conversation_id=conversation_id, cipher=Cipher(key))
    assert "LAZY_KEY" in resumed.state.secret_registry.secret_sources
    run_commands(resumed, llm_server, 'test -z "$LAZY_KEY" && echo EMPTY')
    assert "EMPTY" in observations(resumed)[-1].text
    assert calls == [1, 1]


@pytest.mark.parametrize("value", ["user", "text"])
def test_a_secret_equal_to_a_json_keyword_does_not_break_the_conversation(
    make_conversation, llm_server, value: str
) -> None:
    conv = make_conversation(secrets={"DB_LOGIN": value})
    llm_server.reply_text(f"Logged in as {value}.")
    conv.send_message(f"Log in as {value}")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    user, agent = of_type(conv.state.events, MessageEvent)
    assert user.text == f"Log in as {MASK}"
    assert agent.text == f"Logged in as {MASK}."


# --- secrets of the agent context --------------------------------------------------------


def test_agent_context_secrets_reach_the_registry_and_never_the_disk(
    llm: LLM, llm_server: Any, workspace: Path, persistence_dir: Path
) -> None:
    context = AgentContext(secrets={"CTX_TOKEN": TOKEN, "SHARED": "from-context-1234"})
    assert isinstance((context.secrets or {})["CTX_TOKEN"], StaticSecret)  # a value: a source
    agent = Agent(llm=llm, tools=[Tool(name="terminal")], agent_context=context)
    conv = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        secrets={"SHARED": "from-request-5678"},  # the conversation's own win
        visualizer=None,
    )
    conversation_id = conv.id
    registry = conv.state.secret_registry
    assert registry.get_secret_value("CTX_TOKEN") == TOKEN
    assert registry.get_secret_value("SHARED") == "from-request-5678"
    run_commands(conv, llm_server, f'test "$CTX_TOKEN" = "{TOKEN}" && echo SAME')
    assert "SAME" in observations(conv)[0].text
    conv.close()
    assert TOKEN.encode() not in db_bytes(persistence_dir)

    # Resumed without a cipher: what the registry kept (a redacted value) is not replaced
    # by the agent's context, whose saved copy came back redacted too.
    resumed = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        assert resumed.state.secret_registry.get_secret_value("SHARED") is None
    finally:
        resumed.close()
