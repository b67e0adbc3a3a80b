"""The TUI's border with the engine: it drives any BaseConversation through the public surface
(a conversation that is not a LocalConversation here), and renames and deletes through one
owner of each fact."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    action_cells,
    cell_text,
    cells,
    chat_ready,
    screen_text,
    status,
    submit,
    user_texts,
)
from llm_server import ScriptedLLMServer

from ohtui.opening import Callbacks
from ohtui.sdk import (
    LLM,
    Agent,
    BaseConversation,
    ConversationExecutionStatus,
    ConversationState,
    ConversationStateUpdateEvent,
    Event,
    LocalConversation,
    NeverConfirm,
    Tool,
)
from ohtui.sdk.conversation import (
    ConversationStats,
    OpenConversationError,
    SavedConversations,
    list_conversations,
)
from ohtui.sdk.event import ActionEvent, MessageEvent, ObservationEvent, UserRejectObservation
from ohtui.sdk.llm import Message, MessageToolCall, TextContent
from ohtui.sdk.security import SecurityRisk
from ohtui.sdk.tool.builtins import FinishAction, FinishObservation
from ohtui.sdk.tools.terminal.schema import TerminalAction, TerminalObservation
from ohtui.sdk.workspace import LocalWorkspace
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.picker import PickerScreen
from ohtui.tui.screens.text_prompt import TextPromptScreen
from ohtui.tui.status import RunStatus
from ohtui.tui.widgets.cells import AgentCell

pytestmark = pytest.mark.anyio

Status = ConversationExecutionStatus


@dataclass
class ScriptedState:
    """The state protocol, kept in memory (as a RemoteConversation keeps its cache)."""

    id: uuid.UUID
    agent: Agent
    workspace: LocalWorkspace
    events: list[Event] = field(default_factory=list)
    execution_status: ConversationExecutionStatus = Status.IDLE
    stats: ConversationStats = field(default_factory=ConversationStats)
    persistence_dir: str | None = None
    title: str | None = None
    confirmation_policy: Any = field(default_factory=NeverConfirm)
    security_analyzer: Any = None
    leaf_event_id: str | None = None

    def active_branch(self, limit: int | None = None) -> list[Event]:
        """A linear script: the events up to HEAD (all of them while it follows the newest)."""
        ids = [e.id for e in self.events]
        end = ids.index(self.leaf_event_id) + 1 if self.leaf_event_id in ids else len(ids)
        branch = self.events[:end]
        return branch[-limit:] if limit else branch


class ScriptedConversation(BaseConversation):
    """A BaseConversation that is not a LocalConversation: its first run proposes a command
    and waits for approval; the next runs it and finishes. Events reach the UI only through
    the callbacks, as a remote conversation's arrive over its socket."""

    def __init__(self, callbacks: Callbacks, workspace: Path) -> None:
        self.agent = Agent(llm=LLM(model="remote/scripted-model", api_key="none"), tools=[])
        self.workspace = LocalWorkspace(working_dir=str(workspace))
        self._state = ScriptedState(uuid.uuid4(), self.agent, self.workspace)
        self._callbacks = callbacks
        self.calls: list[str] = []

    # --- what the script does ---------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        self._state.events.append(event)
        assert self._callbacks.on_event is not None
        self._callbacks.on_event(event)

    def _set(self, key: str, value: Any) -> None:
        setattr(self._state, key, value)
        assert self._callbacks.on_event is not None
        update = value.value if isinstance(value, Status) else value
        self._callbacks.on_event(ConversationStateUpdateEvent(key=key, value=update))

    def _pending(self) -> list[ActionEvent]:
        return ConversationState.get_unmatched_actions(self._state.events)

    # --- the BaseConversation surface -------------------------------------------------------

    @property
    def id(self) -> uuid.UUID:
        return self._state.id

    @property
    def state(self) -> Any:
        return self._state

    @property
    def confirmation_policy_active(self) -> bool:
        return True

    @property
    def is_confirmation_mode_active(self) -> bool:
        return True

    def send_message(self, message: str | Message, sender: str | None = None) -> None:
        self.calls.append("send_message")
        text = message if isinstance(message, str) else message.text
        self._emit(
            MessageEvent(
                source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
            )
        )

    def run(self) -> None:
        self.calls.append("run")
        self._set("execution_status", Status.RUNNING)
        waiting = self._pending()
        if not waiting:
            self._emit(
                MessageEvent(
                    source="agent",
                    llm_message=Message(
                        role="assistant", content=[TextContent(text="I will list the files.")]
                    ),
                    llm_response_id="resp-1",
                )
            )
            call = MessageToolCall(id="call-ls", name="terminal", arguments='{"command": "ls"}')
            self._emit(
                ActionEvent(
                    action=TerminalAction(command="ls"),
                    tool_name="terminal",
                    tool_call_id=call.id,
                    tool_call=call,
                    llm_response_id="resp-2",
                    security_risk=SecurityRisk.LOW,
                )
            )
            self._set("execution_status", Status.WAITING_FOR_CONFIRMATION)
            return
        for action in waiting:
            self._emit(
                ObservationEvent(
                    observation=TerminalObservation.from_text(
                        "README.md\nsetup.py", command="ls", exit_code=0
                    ),
                    action_id=action.id,
                    tool_name=action.tool_name,
                    tool_call_id=action.tool_call_id,
                )
            )
        call = MessageToolCall(
            id="call-finish", name="finish", arguments='{"message": "Two files."}'
        )
        finish = ActionEvent(
            action=FinishAction(message="Two files."),
            tool_name="finish",
            tool_call_id=call.id,
            tool_call=call,
            llm_response_id="resp-3",
        )
        self._emit(finish)
        self._emit(
            ObservationEvent(
                observation=FinishObservation.from_text("Two files."),
                action_id=finish.id,
                tool_name="finish",
                tool_call_id=call.id,
            )
        )
        self._set("execution_status", Status.FINISHED)

    def set_confirmation_policy(self, policy: Any) -> None:
        self.calls.append("set_confirmation_policy")
        self._state.confirmation_policy = policy

    def set_security_analyzer(self, analyzer: Any) -> None:
        self.calls.append("set_security_analyzer")
        self._state.security_analyzer = analyzer

    def reject_pending_actions(self, reason: str = "", action_ids: Any = None) -> None:
        self.calls.append("reject_pending_actions")
        for action in self._pending():
            if action_ids is None or action.id in action_ids:
                self._emit(
                    UserRejectObservation(
                        action_id=action.id,
                        tool_name=action.tool_name,
                        tool_call_id=action.tool_call_id,
                        rejection_reason=reason,
                    )
                )
        self._set("execution_status", Status.IDLE)

    def update_secrets(self, secrets: Any) -> None:
        self.calls.append("update_secrets")

    def pause(self) -> None:
        self.calls.append("pause")

    def interrupt(self) -> None:
        self.calls.append("interrupt")

    def set_title(self, title: str) -> None:
        self.calls.append("set_title")
        self._set("title", title)

    def close(self) -> None:
        self.calls.append("close")

    def generate_title(self, llm: LLM | None = None, max_length: int = 50) -> str:
        return "Listing files"

    def ask_agent(self, question: str) -> str:
        return "A side answer."

    def condense(self) -> None:
        raise ValueError("no condenser")

    def execute_tool(self, tool_name: str, action: Any) -> Any:
        raise KeyError(tool_name)

    def fork(self, **options: Any) -> BaseConversation:
        raise ValueError("a scripted conversation cannot be forked")

    def navigate_to(self, event_id: str | None) -> None:
        self._state.leaf_event_id = event_id


@pytest.fixture
def scripted(app_options: AppOptions, project: Path) -> tuple[AppOptions, list[Any]]:
    """Options whose factory opens a ScriptedConversation (the list gets it)."""
    made: list[ScriptedConversation] = []

    def factory(callbacks: Callbacks) -> BaseConversation:
        made.append(ScriptedConversation(callbacks, project))
        return made[-1]

    options = replace(app_options, conversation_factory=factory, policy=ConfirmationPolicy.ALWAYS)
    return options, made


async def test_the_app_drives_a_conversation_that_is_not_a_local_one(
    scripted: tuple[AppOptions, list[ScriptedConversation]], wait: Any
) -> None:
    options, made = scripted
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        (conversation,) = made
        assert isinstance(conversation, BaseConversation)
        assert not isinstance(conversation, LocalConversation)
        assert app.chat is not None
        assert app.chat.status_bar.model == "remote/scripted-model"
        assert app.chat.status_bar.policy is ConfirmationPolicy.ALWAYS
        # The safety the settings ask for went through the public surface.
        assert {"set_security_analyzer", "set_confirmation_policy"} <= set(conversation.calls)

        await submit(pilot, "What is in this folder?")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval")
        assert user_texts(app) == ["What is in this folder?"]
        assert [c.text for c in cells(app, AgentCell)] == ["I will list the files."]
        assert status(app) is RunStatus.WAITING_FOR_CONFIRMATION
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert [row.action.summary for row in modal.rows] == ["ls"]

        await pilot.press("y")
        await wait(pilot, lambda: status(app) == RunStatus.FINISHED, what="the finish")
        (cell,) = action_cells(app, "terminal")
        assert "README.md" in cell_text(cell)
        assert "Two files." in screen_text(app)
        assert conversation.calls.count("run") == 2
        assert "reject_pending_actions" not in conversation.calls

        await submit(pilot, "/title Listing the folder")
        await wait(
            pilot, lambda: app.chat.status_bar.title == "Listing the folder", what="the title"
        )
        assert conversation.state.title == "Listing the folder"
        assert "set_title" in conversation.calls

        await pilot.press("escape")  # nothing runs: Esc pauses nothing
        await submit(pilot, "/sandbox read-only")
        await pilot.pause(0.3)
        assert "cannot sandbox" in " ".join(n.message for n in app._notifications)
        await pilot.press("ctrl+q")
    assert conversation.calls[-1] == "close"


async def test_a_reply_to_a_waiting_action_rejects_it_through_the_surface(
    scripted: tuple[AppOptions, list[ScriptedConversation]], wait: Any
) -> None:
    options, made = scripted
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "What is in this folder?")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval")
        await pilot.press("escape")  # review later
        await submit(pilot, "never mind, list them again")
        await wait(pilot, lambda: made[0].calls.count("run") == 2, what="the next run")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="a new approval")
        assert made[0].calls.count("reject_pending_actions") == 1
        assert user_texts(app) == ["What is in this folder?", "never mind, list them again"]
        first, second = action_cells(app, "terminal")
        assert "rejected" in cell_text(first).lower()
        assert "waiting" in cell_text(second).lower()


# --- one owner of the title ----------------------------------------------------------------


def test_saved_conversations_rename_the_open_one_through_itself(
    tmp_path: Path, project: Path
) -> None:
    conversation = ScriptedConversation(Callbacks(on_event=lambda event: None), project)
    saved = SavedConversations(tmp_path, lambda: conversation)
    saved.rename(conversation.id.hex, "  A new name ")
    assert conversation.state.title == "A new name"
    assert conversation.calls == ["set_title"]
    with pytest.raises(ValueError, match="A title cannot be empty"):
        saved.rename(conversation.id.hex, "   ")
    with pytest.raises(OpenConversationError, match="open now, so it cannot be deleted"):
        saved.delete(conversation.id.hex)


def test_saved_conversations_rename_and_delete_the_others_in_the_store(
    tmp_path: Path, project: Path, llm: LLM
) -> None:
    directory = tmp_path / "conversations"
    other = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=project,
        persistence_dir=directory,
        visualizer=None,
    )
    other.send_message("hello")
    other.close()
    saved = SavedConversations(directory, lambda: None)
    saved.rename(other.id.hex, "Renamed while closed")
    assert [s.title for s in list_conversations(directory)] == ["Renamed while closed"]
    saved.delete(other.id.hex)
    assert list_conversations(directory) == []


def test_a_local_conversation_sets_its_title_and_refuses_an_empty_one(
    tmp_path: Path, project: Path, llm: LLM
) -> None:
    seen: list[Event] = []
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=project,
        persistence_dir=tmp_path / "conversations",
        callbacks=[seen.append],
        visualizer=None,
    )
    with conversation:
        conversation.set_title(" Parser work ")
        with pytest.raises(ValueError, match="a title cannot be empty"):
            conversation.set_title(" ")
    assert conversation.state.title == "Parser work"
    updates = [e for e in seen if isinstance(e, ConversationStateUpdateEvent)]
    assert [(u.key, u.value) for u in updates if u.key == "title"] == [("title", "Parser work")]
    (summary,) = list_conversations(tmp_path / "conversations")
    assert summary.title == "Parser work"


async def test_the_picker_renames_the_open_conversation_through_it_and_will_not_delete_it(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Hi.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        assert app.chat is not None
        assert app.chat.status_bar.title == ""
        await submit(pilot, "/resume")
        await wait(pilot, lambda: isinstance(app.screen, PickerScreen), what="the picker")
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        await wait(pilot, lambda: not picker.pending and len(picker.rows) == 1, what="a row")

        await pilot.press("ctrl+r")
        await wait(pilot, lambda: isinstance(app.screen, TextPromptScreen), what="the prompt")
        app.screen.query_one("#text").value = "Greeting test"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait(pilot, lambda: app.chat.status_bar.title == "Greeting test", what="title")
        assert app.chat.sub_title == "Greeting test"

        await pilot.press("ctrl+d")
        await pilot.pause(0.2)
        assert isinstance(app.screen, PickerScreen)  # no "Delete?" question
        assert any("cannot be deleted" in n.message for n in app._notifications)
        await pilot.press("escape")
        await wait(pilot, lambda: not isinstance(app.screen, PickerScreen), what="the chat")
        assert "Greeting test" in screen_text(app).splitlines()[0]
    (saved,) = list_conversations(app_options.persistence_dir or "")
    assert saved.title == "Greeting test"
