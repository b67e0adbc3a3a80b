"""The server's conversations: the live ones, and those in the store, opened on first use.

Every conversation is a LocalConversation persisted in our store (one SQLite database for
all, the TUI's too unless OHTUI_DATA_DIR moves it). The agent a client described is kept
in the conversation's saved `agent_state`, its keys encrypted with the server's cipher, so
a restarted server resumes it as it was. A conversation whose process died mid-run comes
back PAUSED (the engine answers each action that was in flight with an error saying it was
interrupted): nothing runs until a client asks again.

Every conversation opened here, new or saved, works in a folder under the server's roots
(pinned to its real path) and runs in the sandbox the server's settings ask for.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.conversation.callbacks import logging_failures
from ohtui.sdk.conversation.catalog import LocalCatalog
from ohtui.sdk.conversation.exceptions import ConversationNotFoundError, PersistenceError
from ohtui.sdk.conversation.impl.forking import ConversationIdTakenError
from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.conversation.summary import ConversationSummary
from ohtui.sdk.llm.llm import LLM, same_llm
from ohtui.sdk.utils.cipher import Cipher
from ohtui.sdk.wire.agent_in import WireError, agent_from_wire, redacted
from ohtui.sdk.wire.agent_out import agent_to_wire
from ohtui.server.confinement import Confinement
from ohtui.server.errors import StoppingError
from ohtui.server.hub import Hub
from ohtui.server.info import RECORD_KEY, ServerRecord, agent_echo, state_to_wire
from ohtui.server.requests import ForkConversationRequest, StartConversationRequest
from ohtui.server.served import Served

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Page:
    """One page of a listing."""

    items: list[dict[str, Any]]
    next_page_id: str | None


class Registry:
    """Live conversations by id; opens saved ones on first use. Thread-safe."""

    def __init__(
        self,
        base_dir: Path,
        cipher: Cipher,
        hub: Hub,
        confinement: Confinement,
        *,
        warm_up: bool = True,
    ) -> None:
        """`warm_up`: prepare each new LLM's path in the background (see `_warm_up`)."""
        self.base_dir = base_dir
        self._cipher = cipher
        self._hub = hub
        self._confinement = confinement
        self._warm = warm_up
        self._warmed: set[str | None] = set()
        self._live: dict[uuid.UUID, Served] = {}
        self._lock = threading.RLock()
        self._closed = False
        self._store = ConversationStore(base_dir)
        self.catalog = LocalCatalog(base_dir, self._store)
        """The saved conversations, listed through the store kept open here."""

    def _warm_up(self, llm: LLM) -> None:
        """Prepare the LLM path of a conversation just opened, in the background, once per
        path: litellm's import (seconds of CPU) only for a model that needs it, a pooled
        connection for one called directly."""
        key = llm.base_url if llm.called_directly else None
        with self._lock:
            if not self._warm or key in self._warmed:
                return
            self._warmed.add(key)
        from ohtui.sdk.llm.warm_up import warm_up

        threading.Thread(target=warm_up, args=(llm,), name="llm-warm-up", daemon=True).start()

    # --- lookup --------------------------------------------------------------------------

    def get(self, conversation_id: uuid.UUID) -> Served | None:
        """The live conversation, opened from the store if saved there; None if unknown.
        StoppingError once closed."""
        with self._lock:
            self._check_open()
            served = self._live.get(conversation_id)
            if served is not None:
                return served
            stored = self._store.load(conversation_id.hex)
            if stored is None:
                return None
            served = self._resume(conversation_id, json.loads(stored.state_json))
            self._live[conversation_id] = served
            return served

    def _check_open(self) -> None:
        """StoppingError once `close` began (call under the lock)."""
        if self._closed:
            raise StoppingError()

    def live_count(self) -> int:
        """How many conversations are open."""
        with self._lock:
            return len(self._live)

    def _resume(
        self,
        conversation_id: uuid.UUID,
        data: dict[str, Any],
        switched: tuple[AgentBase, ServerRecord] | None = None,
    ) -> Served:
        """Open a saved conversation with its agent (`switched`: with this agent and record
        instead, the saved agent's LLM switched), confined before anything can run."""
        saved_dir = (data.get("workspace") or {}).get("working_dir")
        if not isinstance(saved_dir, str) or not saved_dir:
            raise WireError(
                f"conversation {conversation_id.hex} was saved without a working folder: "
                "it cannot be served; delete it, or open it in the ohtui TUI"
            )
        # OutsideRootsError: it stays closed. Pinned to the real path checked now.
        working_dir = str(self._confinement.roots.check(saved_dir))
        saved = (data.get("agent_state") or {}).get(RECORD_KEY)
        record = ServerRecord.from_json(saved)
        agent: AgentBase
        if switched is not None:
            agent, record = switched
        elif record is not None and record.sealed_agent:
            agent = agent_from_wire(self._unsealed(conversation_id, record))
        else:
            agent = AgentBase.model_validate(data["agent"])
            if record is None:  # made by the TUI (a fork of it has a record of its own)
                record = ServerRecord(agent=agent_echo(data["agent"]))
        served = Served(record, self._hub.publish)
        served.fork_origin = self._store.fork_origin(conversation_id.hex)
        conversation = LocalConversation(
            agent,
            workspace=working_dir,
            persistence_dir=self.base_dir,
            conversation_id=conversation_id,
            callbacks=[logging_failures(served.on_event)],
            token_callbacks=[served.on_token],
            max_iteration_per_run=int(data.get("max_iterations", 500)),
            stuck_detection=bool(data.get("stuck_detection", True)),
            visualizer=None,
            cipher=self._cipher,
            checkpoints=True,
        )
        self._warm_up(agent.llm)
        try:
            self._confine(conversation, served)
        except BaseException:
            conversation.close()
            raise
        if switched is not None:
            state = conversation.state
            state.agent_state = {**state.agent_state, RECORD_KEY: record.to_json()}
        served.attach(conversation)
        logger.info(
            "conversation %s resumed from the store (%s)", conversation_id.hex, served.status.value
        )
        return served

    def _confine(self, conversation: LocalConversation, served: Served) -> None:
        """Check the folder it works in (made now, maybe) is under a root, and install the
        sandbox, before anything can run."""
        working_dir = conversation.workspace.working_dir
        self._confinement.roots.check(working_dir)
        served.sandbox = self._confinement.install(conversation)

    def _unsealed(self, conversation_id: uuid.UUID, record: ServerRecord) -> dict[str, Any]:
        """The agent payload the client sent, keys and all."""
        secret = self._cipher.decrypt(record.sealed_agent or "")
        if secret is None:
            raise WireError(
                f"conversation {conversation_id.hex}: its agent's keys were saved with "
                "another server key; create a new conversation"
            )
        payload: dict[str, Any] = json.loads(secret.get_secret_value())
        return payload

    # --- switch the LLM ------------------------------------------------------------------

    def switch_llm(self, conversation_id: uuid.UUID, asked: LLM) -> Served | None:
        """Think with another LLM from the next call on (OpenHands' `switch_llm`): as a
        local resume with another model, the conversation is reopened with its agent's LLM
        (and the summarizer that copies it) switched, and its saved agent too, so a restart
        keeps it; None for an unknown conversation. An LLM sent back as shown (its key
        redacted, or none) keeps the old key when its address is the same (never sent to
        another). ConflictError while it runs."""
        with self._lock:
            # Under the lock: a switch that just ended has put its replacement here.
            served = self.get(conversation_id)
            if served is None:
                return None
            old = served.live.agent
            llm = _keeping_key(asked, old.llm)
            if same_llm(old.llm, llm):
                return served
            # A fresh agent: the old one's tools are closed with its conversation.
            dumped = old.model_dump(mode="json", context={"expose_secrets": True})
            agent = switched_agent(AgentBase.model_validate(dumped), llm)
            wire = agent_to_wire(agent)
            moved: dict[str, Any] = {k: wire[k] for k in ("llm", "condenser") if k in wire}
            record = served.record
            sealed = None
            if record.sealed_agent:
                sealed = {**self._unsealed(conversation_id, record), **moved}
            served.retire()  # ConflictError while it runs: then nothing changed
            self._live.pop(conversation_id, None)
            record.agent = redacted({**record.agent, **moved})
            if sealed is not None:
                record.sealed_agent = self._cipher.encrypt(json.dumps(sealed))
            stored = self._store.load(conversation_id.hex)
            if stored is None:
                raise PersistenceError(f"conversation {conversation_id.hex} is no longer saved")
            reopened = self._resume(conversation_id, json.loads(stored.state_json), (agent, record))
            self._live[conversation_id] = reopened
        logger.info("conversation %s now thinks with %s", conversation_id.hex, llm.model)
        self._hub.publish(conversation_id, reopened.full_state_frame())
        return reopened

    # --- create --------------------------------------------------------------------------

    def create(self, request: StartConversationRequest) -> tuple[Served, bool]:
        """Create from an OpenHands StartConversationRequest; (served, created).

        A `conversation_id` that exists returns that conversation, untouched. WireError
        for an agent we cannot run, OutsideRootsError for a folder outside the roots.
        """
        conversation_id = request.conversation_id
        if conversation_id is not None:
            existing = self.get(conversation_id)
            if existing is not None:
                return existing, False
        agent_payload = request.agent
        agent = agent_from_wire(agent_payload)
        working_dir = str(self._confinement.roots.check(request.working_dir))
        record = ServerRecord(
            agent=redacted(dict(agent_payload)),
            sealed_agent=self._cipher.encrypt(json.dumps(agent_payload)),
            tags=request.tags,
            autotitle=request.autotitle,
        )
        served = Served(record, self._hub.publish)
        with self._lock:
            self._check_open()
            conversation = LocalConversation(
                agent,
                workspace=working_dir,
                persistence_dir=self.base_dir,
                conversation_id=conversation_id or uuid.uuid4(),
                callbacks=[logging_failures(served.on_event)],
                token_callbacks=[served.on_token],
                max_iteration_per_run=request.max_iterations or 500,
                stuck_detection=request.stuck_detection,
                stuck_detection_thresholds=request.stuck_detection_thresholds or None,
                secrets=request.secrets or None,
                visualizer=None,
                cipher=self._cipher,
                checkpoints=True,
                client_tools=request.client_tools,
            )
            self._warm_up(agent.llm)
            try:
                self._confine(conversation, served)
                state = conversation.state
                state.agent_state = {**state.agent_state, RECORD_KEY: record.to_json()}
                if request.confirmation_policy is not None:
                    conversation.set_confirmation_policy(request.confirmation_policy)
                if request.security_analyzer is not None:
                    conversation.set_security_analyzer(request.security_analyzer)
            except BaseException:
                conversation.delete_on_close = True
                conversation.close()
                raise
            served.attach(conversation)
            self._live[conversation.id] = served
        initial = request.initial_message
        if initial is not None:
            served.send_message(initial.message, initial.run)
        return served, True

    # --- fork ----------------------------------------------------------------------------

    def fork(self, source_id: uuid.UUID, request: ForkConversationRequest) -> Served | None:
        """Fork a conversation (OpenHands' `fork`): a copy of its events (all, or the branch
        up to `from_event_id`) saved under a new id, served idle with the source's agent,
        sandbox, policy and secrets, its own title and tags (none unless given), and fresh
        metrics unless `reset_metrics` is False. None for an unknown source.
        ConversationIdTakenError for an id taken; UnknownEventError for an unknown
        `from_event_id`; ConflictError while the source is reopened another way."""
        source = self.get(source_id)
        if source is None:
            return None
        fork_id = request.id or uuid.uuid4()
        with self._lock:
            self._check_open()
            if fork_id in self._live or self._store.load(fork_id.hex) is not None:
                raise ConversationIdTakenError(f"Conversation with id {fork_id} already exists")
        record = ServerRecord(
            agent=dict(source.record.agent),
            sealed_agent=source.record.sealed_agent,
            tags=dict(request.tags or {}),
            autotitle=source.record.autotitle,
        )
        # Outside the registry's lock: the copy waits for a step of the source to end.
        fork = source.fork(
            fork_id, request.title, request.tags, request.reset_metrics, request.from_event_id
        )
        try:
            state = fork.state
            state.agent_state = {**state.agent_state, RECORD_KEY: record.to_json()}
        finally:
            fork.close()  # opened without the server's callbacks: served as a saved one
        try:
            served = self.get(fork_id)
        except BaseException:
            self._forget(fork_id)
            raise
        if served is None:
            raise PersistenceError(f"the fork {fork_id.hex} was not saved")
        logger.info("conversation %s forked as %s", source_id.hex, fork_id.hex)
        return served

    def _forget(self, conversation_id: uuid.UUID) -> None:
        """Delete a fork that could not be served (it was never shown to anyone)."""
        try:
            self.catalog.delete(conversation_id.hex)
        except (ConversationNotFoundError, PersistenceError):
            logger.warning("the unserved fork %s could not be deleted", conversation_id.hex)

    # --- listing -------------------------------------------------------------------------

    def summaries(self) -> list[ConversationSummary]:
        """Every saved conversation, most recently updated first."""
        with self._lock:
            self._check_open()
        return self.catalog.summaries()

    def info_of(self, summary: ConversationSummary) -> dict[str, Any] | None:
        """ConversationInfo of a listed conversation, without opening it when not live."""
        with self._lock:
            self._check_open()
            served = self._live.get(uuid.UUID(summary.id))
        if served is not None:
            return served.info()
        stored = self._store.load(summary.id)
        if stored is None:
            return None
        data = json.loads(stored.state_json)
        data["leaf_event_id"] = stored.leaf  # moved with each event: the saved state lags
        record = ServerRecord.from_json((data.get("agent_state") or {}).get(RECORD_KEY))
        if record is None:
            record = ServerRecord(agent=agent_echo(data.get("agent") or {}))
        record.created_at = summary.created_at.replace(tzinfo=None).isoformat()
        origin = (summary.forked_from, summary.forked_at) if summary.forked_from else None
        return state_to_wire(
            data,
            record,
            updated_at=summary.updated_at.replace(tzinfo=None).isoformat(),
            origin=origin,
        )

    # --- delete and shutdown -------------------------------------------------------------

    def delete(self, conversation_id: uuid.UUID) -> bool:
        """Stop, close and delete the conversation; False if unknown. One not open is
        deleted from the store without opening it (it may work outside the roots now);
        ConversationLockedError (a PersistenceError) while another ohtui has it open."""
        with self._lock:
            self._check_open()
            served = self._live.pop(conversation_id, None)
            if served is None:
                try:
                    self.catalog.delete(conversation_id.hex)
                except ConversationNotFoundError:
                    return False
                return True
        served.live.delete_on_close = True
        served.close()
        return True

    def close(self) -> None:
        """Close every live conversation (runs are interrupted), then the store; from then
        on nothing opens (StoppingError)."""
        with self._lock:
            self._closed = True
            live = list(self._live.values())
            self._live.clear()
        logger.info("stopping: closing %d conversation(s)", len(live))
        for served in live:
            try:
                served.close()
            except Exception:
                logger.exception("closing conversation %s failed", served.id.hex)
        self._store.close()


def switched_agent(agent: AgentBase, llm: LLM) -> AgentBase:
    """`agent` thinking with `llm`; its summarizer too when it copied the agent's LLM (same
    model at the same address), keeping its own usage id and settings."""
    update: dict[str, Any] = {"llm": llm}
    condenser = getattr(agent, "condenser", None)
    summarizer = getattr(condenser, "llm", None)
    old = agent.llm
    if (
        condenser is not None
        and isinstance(summarizer, LLM)
        and (summarizer.model, summarizer.base_url) == (old.model, old.base_url)
    ):
        moved = {"model", "base_url", "api_key", "api_version"}
        follows = summarizer.model_copy(update={name: getattr(llm, name) for name in moved})
        update["condenser"] = condenser.model_copy(update={"llm": follows})
    return agent.model_copy(update=update)


def _keeping_key(llm: LLM, old: LLM) -> LLM:
    """`llm` with `old`'s API key when it came without one (redacted, as shown to clients)
    and goes to the same address: a key is never sent to an address it was not given for."""
    if llm.api_key is not None or old.api_key is None or llm.base_url != old.base_url:
        return llm
    return llm.model_copy(update={"api_key": old.api_key})
