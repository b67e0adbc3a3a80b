"""ModelSwitch: the conversation thinks with another model (/model), from its next turn.

The switch is made off the UI thread (the engine takes the conversation's lock; a remote one
asks its server, which reopens the conversation there). Asked while a run goes on, it is
kept and made once the run ends: the agent finishes its turn with the model it began it
with. Each model switched to is remembered (the picker offers the recent ones first), and so
is the conversation's choice, which a resume keeps while the settings name the same model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ohtui.tui import messages as msg
from ohtui.tui.session.words import describe

if TYPE_CHECKING:
    from ohtui.opening import Callbacks
    from ohtui.sdk import BaseConversation
    from ohtui.settings.model_memory import ModelMemory
    from ohtui.settings.profile import Profile
    from ohtui.tui.options import AppOptions
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)


class ModelSwitch:
    """Switches one conversation's model, now or after the running turn."""

    def __init__(
        self,
        link: Link,
        profile: Profile,
        options: AppOptions,
        running: Callable[[], bool],
        callbacks: Callable[[], Callbacks],
    ) -> None:
        """`running`: whether a run is going on; `callbacks`: the engine's callbacks (the
        switched LLM reports its attempts and retries to the status bar as the first did)."""
        self._link = link
        self._profile = profile
        self._options = options
        self._running = running
        self._callbacks = callbacks
        self._pending: str | None = None
        self._memory: ModelMemory | None = None

    @property
    def memory(self) -> ModelMemory:
        """The recent models and the conversations' choices."""
        if self._memory is None:
            from ohtui.settings.model_memory import ModelMemory

            self._memory = ModelMemory(self._options.model_memory_file)
        return self._memory

    @property
    def pending(self) -> str | None:
        """The model switched to once the running turn ends (None: none)."""
        return self._pending

    def current(self) -> str:
        """The model the conversation thinks with ("" before it opens)."""
        conversation = self._link.conversation
        return conversation.agent.llm.model if conversation is not None else ""

    def recent(self) -> list[str]:
        """The models switched to lately, most recent first (reads a file: off the UI thread)."""
        return self.memory.recent()

    def switch(self, model: str) -> None:
        """Think with `model` from the next turn on (UI thread)."""
        model = model.strip()
        link = self._link
        conversation = link.conversation
        if not model:
            link.post(msg.Notice("Name a model, e.g. /model anthropic/claude-sonnet-4-5."))
            return
        if conversation is None:
            link.post(msg.Notice("The conversation is still opening: /model in a moment."))
            return
        current = conversation.agent.llm.model
        if self._running():
            with link.lock:
                self._pending = None if model == current else model
            if model == current:
                link.post(msg.Notice(f"The agent goes on with {model}."))
                return
            link.post(
                msg.Notice(
                    f"Switching to {model} from the next turn: the agent finishes this one "
                    f"with {current}."
                )
            )
            return
        if model == current:
            link.post(msg.Notice(f"The conversation already thinks with {model}."))
            return
        link.spawn(lambda: self._apply(conversation, model), "ohtui-model")

    def apply_pending(self, conversation: BaseConversation) -> None:
        """(The run's thread, as it ends.) Make the switch asked for during the run."""
        with self._link.lock:
            model, self._pending = self._pending, None
        if model is not None and model != conversation.agent.llm.model:
            self._apply(conversation, model)

    def restore_choice(self, conversation: BaseConversation) -> None:
        """(The opening thread.) Go on with the model chosen for this conversation with
        /model, unless the settings name another model since."""
        choice = self.memory.choice(conversation.id.hex)
        if choice is None or not choice.applies(self._profile.settings.llm.model):
            return
        if choice.model != conversation.agent.llm.model:
            self._apply(conversation, choice.model, restored=True)

    def _apply(self, conversation: BaseConversation, model: str, *, restored: bool = False) -> None:
        """Switch now (off the UI thread); say why not when it cannot. `restored`: the
        conversation's own choice, gone back to as it opens (remembered already)."""
        from ohtui.opening.model_switch import MissingKeyError, switched_llm
        from ohtui.sdk import LocalConversation, RemoteConversation, RemoteServerError
        from ohtui.settings.secrets import provider_of

        link = self._link
        current = conversation.agent.llm
        given = self._options.api_key
        opened_with = self._options.model or self._profile.settings.llm.model or ""
        # The key given for the model ohtui opened with (tests) is that provider's only.
        api_key = given if given and provider_of(model) == provider_of(opened_with) else None
        if not isinstance(conversation, LocalConversation | RemoteConversation):
            link.post(msg.Notice("This conversation cannot switch its model.", "warning"))
            return
        try:
            llm = switched_llm(self._profile, current, model, self._callbacks(), api_key=api_key)
            conversation.switch_llm(llm)
        except MissingKeyError as exc:
            link.post(msg.Notice(str(exc), "error"))
            return
        except RemoteServerError as exc:
            logger.info("the server did not switch the model: %s", exc)
            if exc.status_code == 409:
                with link.lock:
                    self._pending = model
                link.post(
                    msg.Notice(f"The server is running the agent: {model} from the next turn.")
                )
                return
            link.post(msg.Notice(f"The model was not switched: {describe(exc)}", "error"))
            return
        except Exception as exc:  # shown to the user; the conversation goes on as it was
            logger.warning("switching the model failed", exc_info=True)
            link.post(msg.Notice(f"The model was not switched: {describe(exc)}", "error"))
            return
        logger.info("conversation %s now thinks with %s", conversation.id.hex, model)
        if not restored:
            self.memory.remember(model, conversation.id.hex, self._profile.settings.llm.model)
        link.post(msg.ModelChanged(model, restored=restored))
