"""`OhtuiAgent`: the protocol's Agent side, one ACP session per conversation of ohtui's
engine. Methods have the names and parameters of the agent-client-protocol package's
`acp.Agent` (its router calls them with the request's fields).

Session ids are the conversations' ids: `session/load` takes any id `ohtui --resume` takes.
Modes are ohtui's confirmation policies (always, risky, never).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    AuthenticateResponse,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    SessionInfo,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from ohtui.acp.client_mcp import ClientMcpError, ClientServer, client_servers
from ohtui.acp.handshake import AUTH_METHOD_ID, initialize_result
from ohtui.acp.opener import (
    AcpOptions,
    MissingKeyError,
    Opening,
    key_problem,
    load_profile,
    open_session,
)
from ohtui.acp.prompt_content import PromptContentError, has_image, to_message
from ohtui.acp.session import AcpSession, Feed, blocking
from ohtui.acp.updates import Updates
from ohtui.opening import SetupError, Target
from ohtui.opening.safety import ConversationSafety
from ohtui.settings.choices import ConfirmationPolicy

logger = logging.getLogger(__name__)

AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS = -32602


def error(code: int, text: str) -> RequestError:
    """A JSON-RPC error whose message is the sentence a user reads."""
    return RequestError(code, text, {"details": text})


class OhtuiAgent:
    """ohtui's engine as an ACP agent."""

    def __init__(self, options: AcpOptions) -> None:
        self._options = options
        self._client: Any = None
        self._sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Any) -> None:
        """The connection to the client: updates and permission requests go through it."""
        self._client = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        """The protocol version and what ohtui can do (see `handshake`)."""
        return InitializeResponse.model_validate(
            initialize_result({"protocolVersion": protocol_version})
        )

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        """Check again for the model's key (the environment or the keyring): ohtui never
        takes a key over the protocol."""
        if method_id != AUTH_METHOD_ID:
            raise error(
                INVALID_PARAMS,
                f"Unknown authentication method {method_id!r}: ohtui offers {AUTH_METHOD_ID!r}.",
            )
        problem = await blocking(lambda: key_problem(load_profile(self._options)), "acp-auth")
        if problem is not None:
            raise error(AUTH_REQUIRED, problem)
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[ClientServer] | None = None, **_: Any
    ) -> NewSessionResponse:
        """A new conversation working in `cwd`, with the client's MCP servers."""
        session = await self._open(cwd, Target(), mcp_servers)
        return NewSessionResponse(session_id=session.id, modes=_modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[ClientServer] | None = None, **_: Any
    ) -> LoadSessionResponse:
        """A saved conversation, its history replayed as updates before the answer."""
        session = self._sessions.get(session_id)
        if session is None:
            session = await self._open(cwd, Target(resume_id=session_id), mcp_servers, replay=True)
        else:
            await self._replay(session)
        return LoadSessionResponse(modes=_modes(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        """The saved conversations (of `cwd`, when given), newest first."""
        from ohtui.sdk.conversation import LocalCatalog

        def listing() -> list[Any]:
            profile = load_profile(self._options)
            return LocalCatalog(profile.conversations_dir).summaries(cwd)

        summaries = await blocking(listing, "acp-list")
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.id,
                    cwd=s.workspace or "",
                    title=s.title or s.first_user_message,
                    updated_at=s.updated_at.isoformat(),
                )
                for s in summaries[:200]
                if s.workspace
            ]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        """Switch the session's confirmation policy."""
        session = self._session(session_id)
        try:
            policy = ConfirmationPolicy(mode_id)
        except ValueError:
            names = ", ".join(p.value for p in ConfirmationPolicy)
            raise error(INVALID_PARAMS, f"Unknown mode {mode_id!r}: use one of {names}.") from None
        await blocking(lambda: session.set_policy(policy), "acp-mode")
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        """Run one turn of the session's agent on the prompt."""
        session = self._session(session_id)
        llm = session.conversation.agent.llm
        try:
            takes_images = any(map(has_image, prompt)) and await blocking(
                llm.vision_is_active, "acp-vision"
            )
            message = to_message(prompt, takes_images, session.model)
        except PromptContentError as exc:
            raise error(INVALID_PARAMS, f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
        return await session.prompt(message)

    async def cancel(self, session_id: str, **_: Any) -> None:
        """Stop the session's turn now."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def shutdown(self) -> None:
        """Close every session: runs stopped, commands and MCP servers ended."""
        sessions, self._sessions = list(self._sessions.values()), {}
        if sessions:
            await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

    # --- sessions ----------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise error(
                RESOURCE_NOT_FOUND,
                f"No session {session_id!r} is open: create one (session/new) or load it "
                "(session/load).",
            )
        return session

    async def _open(
        self,
        cwd: str,
        target: Target,
        servers: list[ClientServer] | None,
        replay: bool = False,
    ) -> AcpSession:
        from ohtui.sdk import ConversationLockedError, ConversationNotFoundError

        workspace = Path(cwd)
        if not workspace.is_absolute():
            raise error(INVALID_PARAMS, f"cwd must be an absolute path, not {cwd!r}.")
        try:
            client_mcp = client_servers(servers)
        except ClientMcpError as exc:
            raise error(INVALID_PARAMS, f"{exc}.") from None
        feed = Feed(self._client, target.resume_id or "", Updates(str(workspace)))
        feed.live = False  # until the conversation is open (and replayed)
        try:
            opening = await blocking(
                lambda: open_session(
                    self._options, workspace, target, feed.callbacks(), client_mcp
                ),
                "acp-open",
            )
        except MissingKeyError as exc:
            feed.close()
            raise error(AUTH_REQUIRED, str(exc)) from None
        except ConversationNotFoundError as exc:
            feed.close()
            raise error(RESOURCE_NOT_FOUND, str(exc)) from None
        except ConversationLockedError as exc:
            feed.close()
            raise error(
                INVALID_PARAMS,
                f"Conversation {exc.conversation_id} is open in another ohtui "
                f"({exc.holder.describe()}), and only one may run it.",
            ) from None
        except (SetupError, OSError) as exc:
            feed.close()
            raise error(INVALID_PARAMS, str(exc)) from None
        session = self._session_of(opening, feed)
        if replay:
            await self._replay(session)
        feed.live = True
        self._warm_up(session)
        return session

    def _session_of(self, opening: Opening, feed: Feed) -> AcpSession:
        from ohtui.logs import mask_in_logs

        conversation = opening.started.conversation
        mask_in_logs(conversation)
        session_id = conversation.id.hex
        feed.rename(session_id)
        # A resumed conversation works in its own folder, whatever the client's cwd.
        feed.updates = Updates(conversation.workspace.working_dir)
        session = AcpSession(
            session_id,
            conversation,
            ConversationSafety(conversation, opening.rules),
            self._client,
            feed,
            opening.started.opened.model,
        )
        self._sessions[session_id] = session
        return session

    async def _replay(self, session: AcpSession) -> None:
        """Send a saved conversation's active branch as updates, as it happened."""
        feed = session.feed
        updates = Updates(session.conversation.workspace.working_dir, replay=True)
        events = await blocking(
            lambda: list(session.conversation.state.active_branch()), "acp-replay"
        )
        for event in events:
            feed.push(updates.of_event(event))
        await feed.drain()

    def _warm_up(self, session: AcpSession) -> None:
        """Load the model's client now, while the user types (litellm takes seconds)."""
        from ohtui.sdk.llm.warm_up import warm_up

        llm = session.conversation.agent.llm
        threading.Thread(target=warm_up, args=(llm,), name="acp-warm-up", daemon=True).start()


def _modes(session: AcpSession) -> SessionModeState:
    """The confirmation policies as the session's modes, the current one named."""
    return SessionModeState(
        current_mode_id=session.safety.policy.value,
        available_modes=[
            SessionMode(id=p.value, name=p.label.capitalize(), description=p.help.capitalize())
            for p in ConfirmationPolicy
        ],
    )
