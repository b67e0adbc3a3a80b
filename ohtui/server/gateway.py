"""`/v1`: the OpenAI-compatible gateway of the OpenHands agent server, on ohtui's.

`GET /v1/models` lists each stored LLM profile as the model `openhands_<profile>`;
`POST /v1/chat/completions` with such a model runs a whole agent turn: a new conversation
(the profile's LLM, the default tools, the request's system text added to the system
prompt) in the server's first root, its latest user message sent and run, and the agent's
final answer returned as the assistant's message. The answer's
`X-OpenHands-ServerConversation-ID` header names the conversation; sent back on a request,
that conversation goes on instead. It runs like any served conversation (sandbox, roots,
approvals off: a gateway client has no way to approve). Streaming is not offered.

Authentication is the server's (`app.ApiKeyMiddleware`): the session key, also as an
OpenAI `Authorization: Bearer` key.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ohtui.sdk.conversation.response_utils import get_agent_final_response
from ohtui.sdk.conversation.state import ConversationExecutionStatus as Status
from ohtui.server.confinement import Confinement
from ohtui.server.limits import parse_json
from ohtui.server.registry import Registry
from ohtui.server.requests import SendMessageRequest, StartConversationRequest
from ohtui.server.stored_settings import StoredSettings

MODEL_PREFIX = "openhands_"
CONVERSATION_HEADER = "X-OpenHands-ServerConversation-ID"
TURN_TIMEOUT_SECONDS = 120.0
DEFAULT_TOOLS = ("terminal", "file_editor", "task_tracker")


class ChatMessage(BaseModel):
    """One OpenAI chat message (text parts only are read)."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None

    @property
    def text(self) -> str:
        """Its text."""
        if isinstance(self.content, str):
            return self.content
        parts = [p.get("text") for p in self.content or [] if p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))


class ChatRequest(BaseModel):
    """`POST /v1/chat/completions` (the fields the gateway reads; others are ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[ChatMessage]
    stream: bool = False


class _GatewayError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Gateway:
    """The routes, bound to the registry, the stored profiles and the roots."""

    def __init__(self, registry: Registry, store: StoredSettings, confinement: Confinement):
        self.registry = registry
        self.store = store
        self.confinement = confinement

    async def models(self, request: Request) -> Response:
        names = await run_in_threadpool(self.store.profiles)
        data = [
            {"id": MODEL_PREFIX + n, "object": "model", "created": 0, "owned_by": "openhands"}
            for n in names
        ]
        return JSONResponse({"object": "list", "data": data})

    async def chat(self, request: Request) -> Response:
        try:
            asked = ChatRequest.model_validate(parse_json(await request.body() or b"{}"))
            if asked.stream:
                raise _GatewayError(400, "stream=true is not offered by ohtui serve's gateway")
            given = request.headers.get(CONVERSATION_HEADER)
            answer, conversation_id = await run_in_threadpool(self._turn, asked, given)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(body)"
            return _error(422, f"{where}: {first['msg']}")
        except ValueError as exc:
            return _error(422, str(exc))
        except _GatewayError as exc:
            return _error(exc.status, str(exc))
        body = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": asked.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        return JSONResponse(body, headers={CONVERSATION_HEADER: str(conversation_id)})

    def _turn(self, asked: ChatRequest, given: str | None) -> tuple[str, uuid.UUID]:
        users = [m for m in asked.messages if m.role == "user"]
        if not users:
            raise _GatewayError(400, "At least one user message is required")
        wire = {"role": "user", "content": [{"type": "text", "text": users[-1].text}], "run": True}
        if given:
            try:
                served = self.registry.get(uuid.UUID(given))
            except ValueError:
                served = None
            if served is None:
                raise _GatewayError(404, f"no conversation {given} on this server")
            served.send_message(SendMessageRequest.parse(wire).message, run=True)
        else:
            served, _ = self.registry.create(self._start(asked, wire))
        if not served.wait_idle(TURN_TIMEOUT_SECONDS):
            raise _GatewayError(504, "Agent run timed out")
        status = served.status
        if status in (Status.ERROR, Status.STUCK):
            raise _GatewayError(500, f"Agent run ended with status: {status.value}")
        if status in (Status.PAUSED, Status.WAITING_FOR_CONFIRMATION):
            raise _GatewayError(409, f"Agent run ended with status: {status.value}")
        answer = get_agent_final_response(list(served.live.state.active_branch()))
        return answer, served.id

    def _start(self, asked: ChatRequest, message: dict[str, Any]) -> StartConversationRequest:
        model = asked.model
        if not model.startswith(MODEL_PREFIX) or len(model) == len(MODEL_PREFIX):
            raise _GatewayError(404, f"Unknown OpenHands model '{model}'. Use GET /v1/models.")
        name = model[len(MODEL_PREFIX) :]
        llm = self.store.profile(name, expose=True)
        if llm is None:
            raise _GatewayError(404, f"Profile '{name}' not found")
        system = "\n\n".join(
            m.text for m in asked.messages if m.role in ("system", "developer") and m.text
        )
        agent: dict[str, Any] = {
            "kind": "Agent",
            "llm": {**llm, "usage_id": f"profile:{name}"},
            "tools": [{"name": tool} for tool in DEFAULT_TOOLS],
        }
        if system:
            agent["agent_context"] = {"system_message_suffix": system}
        return StartConversationRequest.parse(
            {
                "agent": agent,
                "workspace": {"working_dir": str(self.confinement.roots.paths[0])},
                "autotitle": False,
                "initial_message": message,
            }
        )

    def routes(self) -> list[Route]:
        """The routes, relative to /v1."""
        return [
            Route("/models", self.models, methods=["GET"]),
            Route("/chat/completions", self.chat, methods=["POST"]),
        ]


def _error(status: int, message: str) -> JSONResponse:
    """An error as OpenAI clients read it (and as FastAPI's `detail`)."""
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error"}, "detail": message},
        status_code=status,
    )
