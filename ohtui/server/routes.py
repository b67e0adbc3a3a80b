"""The REST routes of the OpenHands agent-server protocol (notes §1.3), on our registry.

Handlers are async and push every blocking call (the store, the engine, LLM calls) to
Starlette's thread pool. Errors are JSON `{"detail": "..."}` with a sentence a user can act
on: 403 a folder outside the server's roots, 404 unknown conversation, event or checkpoint,
409 a conflict with the conversation's state (a run going, nothing to undo, a read-only
conversation, a fork's id taken), 400 a fork from an event the conversation does not have,
422 a payload we cannot use, 503 the server is stopping.

Beyond the OpenHands protocol (capability "checkpoints"): a conversation's checkpoints of its
workspace, `GET .../checkpoints`, `GET .../checkpoints/{checkpoint_id}/changes` and
`POST .../checkpoints/restore`.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ohtui import __version__
from ohtui.sdk.conversation.exceptions import CheckpointError, PersistenceError
from ohtui.sdk.conversation.impl.forking import ConversationIdTakenError
from ohtui.sdk.conversation.response_utils import get_agent_final_response
from ohtui.sdk.event.checkpoint import CheckpointRestoreEvent, find_checkpoint
from ohtui.sdk.wire.agent_in import WireError
from ohtui.sdk.wire.events_out import event_to_wire
from ohtui.sdk.wire.extensions import SANDBOX_FIELD
from ohtui.server import event_search
from ohtui.server.confinement import Confinement
from ohtui.server.errors import StoppingError, UnknownEventError
from ohtui.server.info import RECORD_KEY
from ohtui.server.limits import parse_json
from ohtui.server.registry import Page, Registry
from ohtui.server.requests import (
    AskAgentRequest,
    ConfirmationResponseRequest,
    EventSearchRequest,
    ForkConversationRequest,
    NavigateConversationRequest,
    RequestModel,
    RestoreCheckpointRequest,
    SendMessageRequest,
    SetConfirmationPolicyRequest,
    SetSecurityAnalyzerRequest,
    StartConversationRequest,
    SwitchLLMRequest,
    UpdateConversationRequest,
    UpdateSecretsRequest,
)
from ohtui.server.roots import OutsideRootsError
from ohtui.server.served import ConflictError, Served

logger = logging.getLogger(__name__)

CAPABILITIES = ["per_action_confirmation", "checkpoints"]
"""ohtui extensions a client may use (see `GET /server_info`)."""
PARSE_OFF_LOOP_BYTES = 64 * 1024
"""Bodies at least this large are parsed on the thread pool, not the event loop."""
CONVERSATION_SORTS = ("CREATED_AT", "UPDATED_AT", "CREATED_AT_DESC", "UPDATED_AT_DESC")
Handler = Callable[[Request], Awaitable[Response]]
R = TypeVar("R", bound=RequestModel)


class NotFoundError(Exception):
    """404 with this detail."""


def ok() -> JSONResponse:
    """`{"success": true}`."""
    return JSONResponse({"success": True})


def error(status: int, detail: str) -> JSONResponse:
    """`{"detail": ...}` with `status`."""
    return JSONResponse({"detail": detail}, status_code=status)


def guarded(handler: Handler) -> Handler:
    """Turn our exceptions into JSON error responses (never a traceback to the client)."""

    async def wrapper(request: Request) -> Response:
        try:
            return await handler(request)
        except NotFoundError as exc:
            return error(404, str(exc) or "Not Found")
        except StoppingError as exc:
            return error(503, str(exc))
        except OutsideRootsError as exc:
            return error(403, str(exc))
        except ConflictError as exc:
            return error(409, str(exc))
        except event_search.QueryError as exc:
            return error(422, str(exc))
        except (WireError, ValueError) as exc:
            return error(422, str(exc))
        except PersistenceError as exc:  # locked by another ohtui, read-only, damaged
            return error(409, str(exc))
        except CheckpointError as exc:  # nothing to undo, a running agent, files gone
            return error(409, str(exc))
        except Exception as exc:
            logger.exception("%s %s failed", request.method, request.url.path)
            return error(500, f"{type(exc).__name__}: {exc}")

    return wrapper


class Api:
    """The route handlers, bound to one registry."""

    def __init__(self, registry: Registry, confinement: Confinement, started: float) -> None:
        self.registry = registry
        self.confinement = confinement
        self.started = started
        self.last_activity = time.time()

    # --- helpers -------------------------------------------------------------------------

    async def served(self, request: Request) -> Served:
        """The conversation the path names; NotFound when there is none."""
        served = await run_in_threadpool(self.registry.get, self.conversation_id(request))
        if served is None:
            raise NotFoundError("Not Found")
        return served

    def conversation_id(self, request: Request) -> uuid.UUID:
        """The id the path names; NotFound when it is no UUID."""
        self.last_activity = time.time()
        try:
            return uuid.UUID(request.path_params["conversation_id"])
        except ValueError as exc:
            raise NotFoundError("Not Found") from exc

    @staticmethod
    async def body(request: Request) -> dict[str, Any]:
        """The JSON object body ({} when empty); JSONBodyError or WireError (422) when it is
        not JSON we accept, or not an object."""
        raw = await request.body()
        if not raw.strip():
            return {}
        if len(raw) < PARSE_OFF_LOOP_BYTES:
            data = parse_json(raw)
        else:
            data = await run_in_threadpool(parse_json, raw)
        if not isinstance(data, dict):
            raise WireError("the request body must be a JSON object")
        return data

    @classmethod
    async def parsed(cls, request: Request, model: type[R]) -> R:
        """The body as `model`; WireError (422) saying what is wrong with it."""
        return model.parse(await cls.body(request))

    # --- open probes ---------------------------------------------------------------------

    async def server_info(self, request: Request) -> Response:
        from ohtui.sdk.tool.registry import list_usable_tools

        now = time.time()
        return JSONResponse(
            {
                "title": "ohtui agent server",
                "version": __version__,
                "server": "ohtui",
                "capabilities": CAPABILITIES,
                "uptime": now - self.started,
                "idle_time": now - self.last_activity,
                "usable_tools": list_usable_tools(),
                SANDBOX_FIELD: self.confinement.to_wire(),
            }
        )

    # --- conversations -------------------------------------------------------------------

    async def create(self, request: Request) -> Response:
        payload = await self.parsed(request, StartConversationRequest)
        served, created = await run_in_threadpool(self.registry.create, payload)
        info = await run_in_threadpool(served.info)
        return JSONResponse(info, status_code=201 if created else 200)

    async def get(self, request: Request) -> Response:
        served = await self.served(request)
        return JSONResponse(await run_in_threadpool(served.info))

    async def patch(self, request: Request) -> Response:
        served = await self.served(request)
        update = await self.parsed(request, UpdateConversationRequest)

        def apply() -> None:
            if update.title is not None:
                served.live.set_title(update.title)
            if update.tags is not None:
                served.record.tags = update.tags
                state = served.live.state
                state.agent_state = {**state.agent_state, RECORD_KEY: served.record.to_json()}

        await run_in_threadpool(apply)
        return ok()

    async def final_response(self, request: Request) -> Response:
        served = await self.served(request)
        branch = await run_in_threadpool(lambda: list(served.live.state.active_branch()))
        return JSONResponse({"response": get_agent_final_response(branch)})

    async def delete(self, request: Request) -> Response:
        # Not opened first: a conversation outside the roots can still be deleted.
        if not await run_in_threadpool(self.registry.delete, self.conversation_id(request)):
            raise NotFoundError("Not Found")
        return ok()

    async def search(self, request: Request) -> Response:
        page = await run_in_threadpool(self._conversations, request.query_params)
        return JSONResponse({"items": page.items, "next_page_id": page.next_page_id})

    async def count(self, request: Request) -> Response:
        params = dict(request.query_params)
        params["limit"] = str(10**9)
        params.pop("page_id", None)
        page = await run_in_threadpool(self._conversations, params, False)
        return JSONResponse(len(page.items))

    def _conversations(self, params: Any, paged: bool = True) -> Page:
        order = params.get("sort_order", "CREATED_AT_DESC")
        if order not in CONVERSATION_SORTS:
            raise event_search.QueryError(
                f"sort_order must be one of {', '.join(CONVERSATION_SORTS)}, not '{order}'"
            )
        limit = event_search.parse_limit(params.get("limit")) if paged else 10**9
        status = params.get("status") or params.get("execution_status")
        infos = []
        for summary in self.registry.summaries():
            info = self.registry.info_of(summary)
            if info is not None and (status is None or info["execution_status"] == status):
                infos.append(info)
        key = "created_at" if order.startswith("CREATED") else "updated_at"
        infos.sort(key=lambda i: str(i.get(key) or ""), reverse=order.endswith("_DESC"))
        page_id = params.get("page_id")
        start = next((n for n, i in enumerate(infos) if i["id"] == page_id), 0) if page_id else 0
        items = infos[start : start + limit]
        rest = infos[start + limit :]
        return Page(items, rest[0]["id"] if rest else None)

    # --- the conversation tree -------------------------------------------------------------

    async def fork(self, request: Request) -> Response:
        source_id = self.conversation_id(request)
        asked = await self.parsed(request, ForkConversationRequest)
        try:
            served = await run_in_threadpool(self.registry.fork, source_id, asked)
        except ConversationIdTakenError as exc:
            raise ConflictError(
                f"Conversation with id {asked.id} already exists: fork under another id, "
                "or none (a new one is made)."
            ) from exc
        except UnknownEventError as exc:
            return error(400, str(exc))
        if served is None:
            raise NotFoundError("Source conversation not found")
        return JSONResponse(await run_in_threadpool(served.info), status_code=201)

    async def navigate(self, request: Request) -> Response:
        conversation_id = self.conversation_id(request)
        if not (await request.body()).strip():
            raise WireError(
                "send {'event_id': ...}: the event to make HEAD, or null for an empty HEAD"
            )
        asked = await self.parsed(request, NavigateConversationRequest)
        served = await run_in_threadpool(self.registry.get, conversation_id)
        if served is None:
            raise NotFoundError("Conversation not found")
        try:
            await run_in_threadpool(served.navigate_to, asked.event_id)
        except UnknownEventError as exc:
            raise NotFoundError(str(exc)) from exc
        return JSONResponse(await run_in_threadpool(served.info))

    # --- events --------------------------------------------------------------------------

    async def send_event(self, request: Request) -> Response:
        served = await self.served(request)
        sent = await self.parsed(request, SendMessageRequest)
        await run_in_threadpool(served.send_message, sent.message, sent.run)
        return ok()

    async def events_search(self, request: Request) -> Response:
        served = await self.served(request)
        asked = EventSearchRequest.from_params(request.query_params)
        page = await run_in_threadpool(
            event_search.search,
            served.live.state.events,
            asked.query(),
            asked.page_id,
            asked.limit,
        )
        return JSONResponse(page)

    async def events_count(self, request: Request) -> Response:
        served = await self.served(request)
        query = EventSearchRequest.from_params(request.query_params).query()
        return JSONResponse(
            await run_in_threadpool(event_search.count, served.live.state.events, query)
        )

    async def event(self, request: Request) -> Response:
        served = await self.served(request)
        event_id = request.path_params["event_id"]

        ours = event_search.wants_ohtui_fields(request.query_params)

        def find() -> dict[str, Any] | None:
            for event in served.live.state.events:
                if event.id == event_id:
                    return event_to_wire(event, ohtui_fields=ours)
            return None

        frame = await run_in_threadpool(find)
        if frame is None:
            raise NotFoundError(f"no event {event_id} in conversation {served.id}")
        return JSONResponse(frame)

    async def respond_to_confirmation(self, request: Request) -> Response:
        served = await self.served(request)
        answer = await self.parsed(request, ConfirmationResponseRequest)
        await run_in_threadpool(
            served.respond_to_confirmation,
            answer.accept,
            answer.rejection_reason,
            answer.action_ids,
        )
        return ok()

    # --- run controls --------------------------------------------------------------------

    async def run(self, request: Request) -> Response:
        served = await self.served(request)
        await run_in_threadpool(served.start_run)
        return ok()

    async def pause(self, request: Request) -> Response:
        served = await self.served(request)
        await run_in_threadpool(served.live.pause)
        return ok()

    async def interrupt(self, request: Request) -> Response:
        served = await self.served(request)
        await run_in_threadpool(served.interrupt)
        return ok()

    async def confirmation_policy(self, request: Request) -> Response:
        served = await self.served(request)
        policy = (await self.parsed(request, SetConfirmationPolicyRequest)).policy
        await run_in_threadpool(served.live.set_confirmation_policy, policy)
        return ok()

    async def switch_llm(self, request: Request) -> Response:
        served = await self.served(request)
        llm = (await self.parsed(request, SwitchLLMRequest)).llm
        # By id: a switch that ended meanwhile replaced `served` with another object.
        if await run_in_threadpool(self.registry.switch_llm, served.id, llm) is None:
            raise NotFoundError("Not Found")
        return ok()

    async def security_analyzer(self, request: Request) -> Response:
        served = await self.served(request)
        analyzer = (await self.parsed(request, SetSecurityAnalyzerRequest)).security_analyzer
        await run_in_threadpool(served.live.set_security_analyzer, analyzer)
        return ok()

    async def secrets(self, request: Request) -> Response:
        served = await self.served(request)
        secrets = (await self.parsed(request, UpdateSecretsRequest)).secrets
        await run_in_threadpool(served.live.update_secrets, secrets)
        return ok()

    async def ask_agent(self, request: Request) -> Response:
        served = await self.served(request)
        question = (await self.parsed(request, AskAgentRequest)).question
        try:
            answer = await run_in_threadpool(served.live.ask_agent, question)
        except Exception as exc:  # noqa: BLE001 -- the LLM's failure, told as a 500 like OpenHands
            logger.warning("ask_agent failed: %s", exc)
            return error(500, f"The agent could not answer: {exc}")
        return JSONResponse({"response": answer})

    async def condense(self, request: Request) -> Response:
        served = await self.served(request)
        try:
            await run_in_threadpool(served.live.condense)
        except ValueError as exc:
            raise ConflictError(f"Cannot condense conversation: {exc}") from exc
        except Exception as exc:
            if type(exc).__name__ == "NoCondensationAvailableException":
                raise ConflictError(f"Cannot condense conversation: {exc}") from exc
            raise
        return ok()

    # --- checkpoints of the workspace (ohtui's own) ----------------------------------------

    async def checkpoints(self, request: Request) -> Response:
        served = await self.served(request)

        def listing() -> dict[str, Any]:
            conversation = served.live
            undo = conversation.undo_checkpoint()
            return {
                "items": [
                    c.model_dump(mode="json", exclude_none=True)
                    for c in conversation.list_checkpoints()
                ],
                "undo_checkpoint_id": undo.checkpoint_id if undo is not None else None,
            }

        return JSONResponse(await run_in_threadpool(listing))

    async def checkpoint_changes(self, request: Request) -> Response:
        served = await self.served(request)
        wanted = request.path_params["checkpoint_id"]
        checkpoint_id = await run_in_threadpool(self.checkpoint_id, served, wanted)

        def changes() -> dict[str, Any]:
            conversation = served.live
            listed = conversation.checkpoint_changes(checkpoint_id)
            return {
                "checkpoint_id": checkpoint_id,
                "changes": [c.model_dump(mode="json") for c in listed],
                "diff": conversation.checkpoint_diff(checkpoint_id),
            }

        return JSONResponse(await run_in_threadpool(changes))

    async def restore_checkpoint(self, request: Request) -> Response:
        served = await self.served(request)
        wanted = (await self.parsed(request, RestoreCheckpointRequest)).checkpoint_id

        def restore() -> CheckpointRestoreEvent:
            checkpoint_id = self.checkpoint_id(served, wanted) if wanted is not None else None
            return served.restore_checkpoint(checkpoint_id)

        event = await run_in_threadpool(restore)
        return JSONResponse(event.model_dump(mode="json", exclude_none=True))

    @staticmethod
    def checkpoint_id(served: Served, wanted: str) -> str:
        """The full id of the conversation's checkpoint `wanted` names (a prefix of 4 or
        more characters is enough); NotFound when it names none."""
        found = find_checkpoint(served.live.state.events, wanted)
        if found is None or found.checkpoint_id is None:
            raise NotFoundError(
                f"Conversation {served.id.hex} has no checkpoint '{wanted}' (or the prefix "
                "matches several): its checkpoints are listed at "
                f"/api/conversations/{served.id.hex}/checkpoints."
            )
        return found.checkpoint_id

    # --- table ---------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        """Every route under /api (paths relative to it), most specific first."""
        c = "/conversations"
        one = c + "/{conversation_id}"
        table: list[tuple[str, Handler, list[str]]] = [
            (c + "/search", self.search, ["GET"]),
            (c + "/count", self.count, ["GET"]),
            (c, self.create, ["POST"]),
            (one, self.get, ["GET"]),
            (one, self.patch, ["PATCH"]),
            (one, self.delete, ["DELETE"]),
            (one + "/agent_final_response", self.final_response, ["GET"]),
            (one + "/events/search", self.events_search, ["GET"]),
            (one + "/events/count", self.events_count, ["GET"]),
            (one + "/events/respond_to_confirmation", self.respond_to_confirmation, ["POST"]),
            (one + "/events/{event_id}", self.event, ["GET"]),
            (one + "/events", self.send_event, ["POST"]),
            (one + "/run", self.run, ["POST"]),
            (one + "/pause", self.pause, ["POST"]),
            (one + "/interrupt", self.interrupt, ["POST"]),
            (one + "/confirmation_policy", self.confirmation_policy, ["POST"]),
            (one + "/security_analyzer", self.security_analyzer, ["POST"]),
            (one + "/switch_llm", self.switch_llm, ["POST"]),
            (one + "/secrets", self.secrets, ["POST"]),
            (one + "/ask_agent", self.ask_agent, ["POST"]),
            (one + "/condense", self.condense, ["POST"]),
            (one + "/fork", self.fork, ["POST"]),
            (one + "/navigate", self.navigate, ["POST"]),
            (one + "/checkpoints", self.checkpoints, ["GET"]),
            (one + "/checkpoints/restore", self.restore_checkpoint, ["POST"]),
            (one + "/checkpoints/{checkpoint_id}/changes", self.checkpoint_changes, ["GET"]),
        ]
        return [Route(path, guarded(handler), methods=methods) for path, handler, methods in table]
