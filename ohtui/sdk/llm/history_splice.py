"""A long history through litellm without litellm walking it on every call.

litellm's request path copies and rewrites every message several times per call (thought
signatures, cache marks, role fixes, the provider's own format): with a conversation of
thousands of messages that is a tenth of a second per call, growing with every step. Its
provider code is still what we want (each provider's quirks, auth, answers), so it keeps
doing all of that, on a short request: the history's head (system prompt, first message)
and the turns it has not seen yet. The turns it translated on earlier calls are put back
into the request body, as litellm wrote them then, on the way to the server (an httpx
transport under litellm's HTTP client).

A turn is an assistant message and the messages after it up to the next assistant message
that follows another role: providers that merge neighbouring messages (Anthropic puts tool
results into one user message) never merge across that boundary, so a turn's translation
does not depend on what comes before or after it. Only turns of `EncodedMessage`s (never
changed once made) are kept, matched by identity; a turn with a fresh dict (the newest,
marked as a prompt-cache point) is translated again on each call. If litellm's answer does
not split into the turns it was given, nothing is sent and the call is made again with the
whole history (and that model is no longer spliced).
"""

from __future__ import annotations

import json
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ohtui.sdk.llm.wire import EncodedMessage

PROVIDERS = frozenset({"anthropic", "hosted_vllm"})
"""litellm providers whose requests are spliced: each is a JSON body with `messages`, sent
unsigned through litellm's HTTP client (a signed body, as Bedrock's, could not be changed),
and checked by tests to come out as litellm builds it with the whole history."""
_MARK = "\x00ohtui-spliced-turns\x00"
_SEP = ", "
"""Between a JSON array's items, as `json.dumps` (litellm's encoder) writes them: the body
comes out byte for byte as litellm would have sent it whole."""


@dataclass
class _Turn:
    """A translated turn: its messages (kept, so their ids stay theirs) and litellm's JSON."""

    messages: tuple[Any, ...]
    translated: list[str]


@dataclass
class _Plan:
    """One call's splice, handed from the caller to the transport on the same thread."""

    kept: tuple[bytes, ...]
    """The kept turns' translations, in pieces that are runs of a JSON array's messages
    (no brackets): joined once, into the body (a string built up and copied on every call
    cost a millisecond at a few thousand messages)."""
    sent: list[tuple[Any, ...]]
    """The turns litellm is given, in order (their translations are learned on the way)."""
    learned: list[list[str]] = field(default_factory=list)
    failed: bool = False
    spliced: bool = False


class SpliceMismatchError(Exception):
    """litellm's request did not split into the turns it was given (nothing was sent)."""


@dataclass
class HistorySplicer:
    """The translated turns of one model's conversation, and how to reuse them."""

    turns: list[_Turn] = field(default_factory=list)
    flat: list[Any] = field(default_factory=list)
    """The kept turns' messages, in order: a history that repeats them is matched at once."""
    kept: tuple[bytes, ...] = ()
    disabled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, send: Callable[[list[Any]], Any], messages: Sequence[Any]) -> Any:
        """`send` (a litellm call) with a short message list; the server gets them all."""
        if self.disabled:
            return send(list(messages))
        with self.lock:
            turns, flat, kept_pieces = self.turns, self.flat, self.kept
        matched = _repeats(messages, flat)
        if matched is not None:  # the usual step: the history so far, then new turns
            head, new = split_turns(messages[matched:], start=True)
            head = [*messages[: matched - len(flat)], *head]
            kept = turns
        else:
            head, all_turns = split_turns(messages)
            kept = []
            for cached, turn in zip(turns, all_turns, strict=False):
                if len(cached.messages) != len(turn) or not all(
                    map(operator.is_, cached.messages, turn)
                ):
                    break
                kept.append(cached)
            new = all_turns[len(kept) :]
            joined = _SEP.join(m for turn in kept for m in turn.translated)
            kept_pieces = (joined.encode(),) if joined else ()
        plan = _Plan(kept=kept_pieces, sent=new)
        short = [*head, *(m for turn in new for m in turn)]
        _local.plan = plan
        try:
            answer = send(short)
        except Exception:
            if not plan.failed:
                raise
            answer = None
        finally:
            _local.plan = None
        if plan.failed or (kept and not plan.spliced):
            # Mismatched (nothing sent), or, never expected, sent without the kept turns.
            with self.lock:
                self.disabled = True
                self.turns, self.flat, self.kept = [], [], ()
            return send(list(messages))
        if plan.spliced:
            learned = _immutable_prefix(
                [
                    _Turn(turn, translated)
                    for turn, translated in zip(new, plan.learned, strict=True)
                ]
            )
            added = _SEP.join(m for turn in learned for m in turn.translated)
            with self.lock:
                self.turns = kept + learned
                if matched is not None:
                    self.flat = flat + [m for turn in learned for m in turn.messages]
                else:
                    self.flat = [m for turn in self.turns for m in turn.messages]
                self.kept = (*kept_pieces, added.encode()) if added else kept_pieces
        return answer


def _repeats(messages: Sequence[Any], flat: list[Any]) -> int | None:
    """Where the new turns start when `messages` holds the kept turns (`flat`) unchanged
    after the head, and a new turn starts right after them; else None."""
    if not flat:
        return None
    first = flat[0]  # the head before it is a few messages
    offset = next((i for i, m in enumerate(messages[:8]) if m is first), None)
    if offset is None:
        return None
    end = offset + len(flat)
    if len(messages) < end or not all(map(operator.is_, flat, messages[offset:end])):
        return None
    if len(messages) == end:
        return end
    if _role(messages[end]) != "assistant" or _role(messages[end - 1]) == "assistant":
        return None  # the last kept turn goes on: translated again with the new messages
    return end


def _immutable_prefix(turns: list[_Turn]) -> list[_Turn]:
    kept = []
    for turn in turns:
        if not all(isinstance(m, EncodedMessage) for m in turn.messages):
            break
        kept.append(turn)
    return kept


def split_turns(
    messages: Sequence[Any], start: bool = False
) -> tuple[list[Any], list[tuple[Any, ...]]]:
    """The messages before the first turn, and the turns (see the module's docstring);
    `start`: the messages are known to begin a turn."""
    roles = [_role(m) for m in messages]
    starts = [
        i for i in range(1, len(roles)) if roles[i] == "assistant" and roles[i - 1] != "assistant"
    ]
    if start and roles:
        starts.insert(0, 0)
    if not starts:
        return list(messages), []
    ends = [*starts[1:], len(messages)]
    return list(messages[: starts[0]]), [
        tuple(messages[a:b]) for a, b in zip(starts, ends, strict=True)
    ]


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else getattr(message, "role", None)


def rewrite_body(content: bytes) -> bytes | None:
    """The body to send instead of `content` under this thread's plan (None: as it is).

    Raises SpliceMismatchError when the body's messages do not split into the turns sent."""
    plan = _local.plan
    if plan is None or plan.spliced:
        return None
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        plan.failed = True  # not a body we know: never send it without the kept turns
        raise SpliceMismatchError("litellm's request has no `messages` to splice into")
    head, turns = split_turns(body["messages"])
    if len(turns) != len(plan.sent):
        plan.failed = True
        raise SpliceMismatchError(
            f"litellm's request has {len(turns)} turns where {len(plan.sent)} were given"
        )
    translated = [[json.dumps(m) for m in turn] for turn in turns]
    plan.learned = translated
    plan.spliced = True
    before, _, after = json.dumps({**body, "messages": _MARK}).partition(json.dumps(_MARK))
    pieces = [_SEP.join(json.dumps(m) for m in head).encode(), *plan.kept]
    pieces.append(_SEP.join(m for turn_json in translated for m in turn_json).encode())
    messages = _SEP.encode().join(p for p in pieces if p)
    return b"".join((before.encode(), b"[", messages, b"]", after.encode()))


class _Local(threading.local):
    plan: _Plan | None = None
    rehearsing: bool = False


class _RehearsalError(Exception):
    """Raised instead of sending a rehearsed request."""


_local = _Local()
_splicers: OrderedDict[tuple[Any, ...], HistorySplicer] = OrderedDict()
_splicers_lock = threading.Lock()
_providers: dict[tuple[Any, ...], str | None] = {}
_client: list[Any] = []
MAX_CONVERSATIONS = 8
"""Splicers kept (one per model and conversation in use), least recently used dropped."""


def completion(litellm: Any, request: dict[str, Any]) -> Any:
    """`litellm.completion(**request)`, its history spliced where the provider allows it."""
    provider = _provider(litellm, request)
    messages = request.get("messages")
    if provider not in PROVIDERS or not isinstance(messages, list) or "client" in request:
        return litellm.completion(**request)
    first = next((m for m in messages[1:9] if _role(m) == "assistant"), None)
    if not isinstance(first, EncodedMessage):  # nothing to keep: a short or one-off request
        return litellm.completion(**request)
    key = (request.get("model"), request.get("api_base"), provider, id(first))
    with _splicers_lock:
        splicer = _splicers.pop(key, None) or HistorySplicer()
        _splicers[key] = splicer
        while len(_splicers) > MAX_CONVERSATIONS:
            _splicers.popitem(last=False)
    client = http_client()
    return splicer.call(
        lambda short: litellm.completion(**{**request, "messages": short, "client": client}),
        messages,
    )


def rehearse(litellm: Any, request: dict[str, Any]) -> None:
    """Run litellm's path for `request` up to sending it (nothing is sent), so that the
    first real call does not pay for what litellm does once (importing the provider's
    code, making its HTTP client); only for the providers spliced here."""
    if _provider(litellm, request) not in PROVIDERS:
        return
    _local.rehearsing = True
    try:
        litellm.completion(**{**request, "client": http_client()})
    except Exception:  # noqa: BLE001 - the rehearsal ends in an error by design
        pass
    finally:
        _local.rehearsing = False


def _provider(litellm: Any, request: dict[str, Any]) -> str | None:
    key = (request.get("model"), request.get("custom_llm_provider"), request.get("api_base"))
    if key not in _providers:
        try:
            _, provider, _, _ = litellm.get_llm_provider(
                str(key[0]), custom_llm_provider=key[1], api_base=key[2]
            )
        except Exception:  # noqa: BLE001 - litellm.completion reports it in its own words
            provider = None
        _providers[key] = provider
    return _providers[key]


def http_client() -> Any:
    """litellm's HTTP client (its proxies, certificates, headers), every request of which
    passes `rewrite_body` on its way out (made once, shared)."""
    if _client:
        return _client[0]
    import httpx
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    class SplicingClient(httpx.Client):
        def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
            if _local.rehearsing:
                raise _RehearsalError
            if request.method == "POST":
                new = rewrite_body(request.read())
                if new is not None:
                    headers = httpx.Headers(request.headers)
                    headers["Content-Length"] = str(len(new))
                    request = httpx.Request(
                        request.method,
                        request.url,
                        headers=headers,
                        content=new,
                        extensions=request.extensions,
                    )
            return super().send(request, **kwargs)

    class SplicingHandler(HTTPHandler):
        def create_client(self) -> httpx.Client:
            client = super().create_client()
            # The same client, its requests passing `send` above (whichever transport or
            # proxy mount then carries them).
            client.__class__ = SplicingClient
            return client

    with _splicers_lock:
        if not _client:
            _client.append(SplicingHandler())
    return _client[0]
