"""LLM: one configured model, called through litellm with retries, streaming and metrics.

One module, over 600 lines, on purpose: code written against the SDK (its tests among it)
patches `litellm`, `logger` and the token and model-info helpers at this module's path
(`openhands.sdk.llm.llm.X`), so the calls that look them up stay here. What does not (the
wire formats, counting, prompt caching, prompted tools, errors) lives in its own modules.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    SerializationInfo,
    field_serializer,
    field_validator,
)

from ohtui.sdk.llm import direct, history_splice, litellm_price, model_map, openhands_provider
from ohtui.sdk.llm._litellm import call_options, litellm, unlogged
from ohtui.sdk.llm.counting import count_tokens, lookup_context_window
from ohtui.sdk.llm.errors import map_error
from ohtui.sdk.llm.exceptions import (
    LLMBadRequestError,
    LLMCancelledError,
    LLMError,
    LLMNoResponseError,
)
from ohtui.sdk.llm.fallback_strategy import FallbackStrategy
from ohtui.sdk.llm.message import ImageContent, Message
from ohtui.sdk.llm.metrics import Metrics, MetricsSnapshot, TokenUsage
from ohtui.sdk.llm.prompt_cache import mark_cache_points, needs_cache_marks
from ohtui.sdk.llm.prompted_tools import parse_answer, to_prompted
from ohtui.sdk.llm.responses_api import (
    message_from_response,
    to_responses_input,
    to_responses_tools,
)
from ohtui.sdk.llm.responses_api import token_counts as responses_token_counts
from ohtui.sdk.llm.streaming import StreamAssembler, TokenCallbackType
from ohtui.sdk.llm.wire import EncodedMessage
from ohtui.sdk.utils.exposure import dump_secret
from ohtui.sdk.utils.valid_text import valid_model

if TYPE_CHECKING:
    from ohtui.sdk.llm.completion_log import CompletionRecord

logger = logging.getLogger(__name__)

MIN_KEY_LENGTH = 8
"""Shorter API keys are placeholders for servers that want none ("EMPTY", "none")."""

RESPONSES_API_FAMILIES = ("gpt-5", "codex-mini")
"""Models that `api_mode="auto"` asks through the Responses API (on OpenAI itself)."""
REASONING_FAMILIES = ("gpt-5", "o1", "o3", "o4", "codex")
"""Models whose reasoning the Responses API can hand back encrypted, to pass on."""

T = TypeVar("T")
ToolsArg = Sequence[dict[str, Any]]
RetryListener = Callable[[int, float, LLMError], None]
"""Told (attempt number, seconds until the retry, the error) before each retry."""
AttemptListener = Callable[[int], None]
"""Told the attempt number (1 for the first) as each attempt of a call starts."""
ChatMessages = Sequence[Message | dict[str, Any]]
Mask = Callable[[Any], Any]
"""Masks secrets in JSON-like data (a conversation's `SecretRegistry.mask_data`)."""


_CHAT_DICT_TYPES = frozenset({dict, EncodedMessage})
"""Message types sent as they are (a subclass of dict might be anything: walked)."""


@dataclass(frozen=True)
class LLMResponse:
    """The result of one completion: the message, its response id and the metrics after it.

    Built from a provider's raw response (`raw_response=`, as the SDK does), the id is the
    raw response's.
    """

    message: Message
    id: str = ""
    metrics: MetricsSnapshot = field(default_factory=MetricsSnapshot)
    usage: TokenUsage = field(default_factory=TokenUsage)
    finish_reason: str | None = None
    raw_response: Any = None

    def __post_init__(self) -> None:
        if not self.id and self.raw_response is not None:
            object.__setattr__(self, "id", str(getattr(self.raw_response, "id", "") or ""))


class _Answer(NamedTuple):
    """One attempt's answer, before it is recorded."""

    message: Message
    response_id: str
    counts: dict[str, int]
    finish_reason: str | None


@dataclass(frozen=True)
class LLMCallContext:
    """What a conversation tells its LLM calls about itself.

    `prompt_cache_key` groups requests that share a long prefix (one conversation's) so
    that OpenAI serves them from the same prompt cache. `mask` hides the conversation's
    secrets in what is written about a call (completion logs).
    """

    prompt_cache_key: str | None = None
    mask: Mask | None = None


class LLM(BaseModel):
    """A language model behind any litellm-supported provider or OpenAI-compatible URL."""

    model_config = ConfigDict(defer_build=True, extra="forbid", validate_assignment=True)

    model: str = Field(description="litellm model name, e.g. 'openai/gpt-4o' or 'anthropic/…'.")
    api_key: SecretStr | None = Field(default=None, description="The provider API key.")
    base_url: str | None = Field(default=None, description="Custom endpoint, e.g. a local server.")
    api_version: str | None = None
    custom_llm_provider: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_output_tokens: int | None = Field(default=None, gt=0)
    max_input_tokens: int | None = Field(
        default=None, gt=0, description="Context window; looked up from litellm when unset."
    )
    timeout: float = Field(default=300.0, gt=0, description="Seconds to wait for one answer.")
    connect_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds to wait for the connection to the server (an unreachable one "
        "fails fast); the answer itself may take `timeout`.",
    )
    num_retries: int = Field(default=4, ge=0)
    retry_min_wait: float = Field(default=2.0, ge=0)
    retry_max_wait: float = Field(default=30.0, ge=0)
    retry_multiplier: float = Field(default=2.0, ge=1)
    usage_id: str = Field(default="default", description="Key of this LLM's metrics.")
    stream: bool = Field(default=False, description="Stream tokens to token callbacks.")
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = None
    drop_params: bool = Field(default=True, description="Drop parameters the model rejects.")
    input_cost_per_token: float | None = Field(default=None, ge=0)
    output_cost_per_token: float | None = Field(default=None, ge=0)
    extra_headers: dict[str, str] | None = None
    api_mode: Literal["auto", "chat", "responses"] = Field(
        default="auto",
        description="Which OpenAI API `uses_responses_api` advises: 'auto' picks the Responses "
        "API for OpenAI's GPT-5 family on OpenAI itself.",
    )
    caching_prompt: bool = Field(
        default=True,
        description="Use the provider's prompt cache: mark cache breakpoints where the model "
        "needs them (Claude), key OpenAI's cache by conversation.",
    )
    native_tool_calling: bool = Field(
        default=True,
        description="Send tools as the API's `tools`; False describes them in the system "
        "prompt and reads calls from the answer's text (for servers without tool calling).",
    )
    disable_vision: bool | None = Field(
        default=None, description="Treat a vision-capable model as text-only."
    )
    log_completions: bool = Field(
        default=False,
        description="Write each call's request and answer to a JSON file (secrets masked).",
    )
    log_completions_folder: str = Field(
        default=os.path.join(os.getenv("LOG_DIR", "logs"), "completions"),
        description="Where `log_completions` writes its files.",
    )
    fallback_strategy: FallbackStrategy | None = Field(
        default=None,
        exclude=True,
        description="LLM profiles to try when a call fails for good with a transient "
        "error; not saved with the LLM.",
    )

    _metrics: Metrics | None = PrivateAttr(default=None)
    _retry_listeners: list[RetryListener] = PrivateAttr(default_factory=list)
    _attempt_listeners: list[AttemptListener] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _price_unknown: bool = PrivateAttr(default=False)
    _call_context: LLMCallContext = PrivateAttr(default_factory=LLMCallContext)

    @field_validator("model")
    @classmethod
    def _model_given(cls, model: str) -> str:
        if not model.strip():
            raise ValueError("model must be specified, e.g. 'openai/gpt-4o'")
        return model

    @field_serializer("api_key")
    def _serialize_api_key(self, value: SecretStr | None, info: SerializationInfo) -> str | None:
        # Keys are never written out (not even encrypted with the conversation's cipher)
        # unless a caller explicitly asks for them.
        context = info.context or {}
        if value is None or not context.get("expose_secrets"):
            return None
        return dump_secret(value.get_secret_value(), context)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> LLM:
        """A copy with its own (empty) metrics; usage of the copy is not added to this LLM's.

        A subclass's own private state is carried over, as pydantic's model_copy would.
        """
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        if deep:
            fields = copy.deepcopy(fields)
        copied = type(self)(**{**fields, **(update or {})})
        for name in type(self).__private_attributes__.keys() - LLM.__private_attributes__.keys():
            value = getattr(self, name)
            setattr(copied, name, copy.deepcopy(value) if deep else value)
        return copied

    def is_caching_prompt_active(self) -> bool:
        """Whether requests mark prompt-cache breakpoints: `caching_prompt` is on and the
        model caches only up to marked blocks (Claude, under any provider)."""
        return self.caching_prompt and needs_cache_marks(self.model)

    @property
    def maskable_key(self) -> str | None:
        """The API key, to hide wherever it could show (None: none, or a placeholder)."""
        key = self.api_key.get_secret_value() if self.api_key is not None else ""
        return key if len(key) >= MIN_KEY_LENGTH else None

    @property
    def metrics(self) -> Metrics:
        """This LLM's accumulated cost, tokens and latency."""
        if self._metrics is None:
            self._metrics = Metrics(model_name=self.model)
        return self._metrics

    def reset_metrics(self) -> None:
        """Start counting afresh (the totals so far are dropped, not saved anywhere)."""
        self._metrics = Metrics(model_name=self.model)

    def vision_is_active(self) -> bool:
        """Whether images are worth sending: the model reads them (litellm's model map says
        so) and `disable_vision` is not set."""
        if self.disable_vision:
            return False
        info = model_map.model_info(self._capability_model(), self.custom_llm_provider)
        return bool((info or {}).get("supports_vision"))

    def _capability_model(self) -> str:
        """The name this model's window, prices and abilities are known under."""
        return openhands_provider.capability_name(self.model)

    def _route(self) -> tuple[str, str | None]:
        """The model name and base URL calls are made with (`openhands/` is a proxy)."""
        return openhands_provider.route(self.model, self.base_url)

    def set_call_context(self, context: LLMCallContext) -> None:
        """The context of the calls not given one (a conversation sets its own)."""
        self._call_context = context

    def add_retry_listener(self, listener: RetryListener) -> None:
        """Be told before each retry, e.g. to show "rate limited, retrying in 8 s"."""
        self._retry_listeners.append(listener)

    def add_attempt_listener(self, listener: AttemptListener) -> None:
        """Be told as each attempt of a call starts, e.g. to show "connecting…"."""
        self._attempt_listeners.append(listener)

    def _timeouts(self) -> Any:
        """The HTTP timeouts: a short one to connect, the long one to answer."""
        import httpx

        return httpx.Timeout(self.timeout, connect=min(self.connect_timeout, self.timeout))

    def restore_metrics(self, metrics: Metrics) -> None:
        """Continue accumulating into saved metrics (used when a conversation resumes)."""
        self._metrics = metrics

    @property
    def context_window(self) -> int | None:
        """The model's input token limit: `max_input_tokens` when set, else litellm's model
        map (offline); None for a model it does not know (set `max_input_tokens` then)."""
        if self.max_input_tokens:
            return self.max_input_tokens
        model = self._capability_model()
        if self.called_directly:  # litellm is never needed for it: not even imported
            return model_map.context_window(model, self.custom_llm_provider)
        return lookup_context_window(model, self.custom_llm_provider)

    @property
    def called_directly(self) -> bool:
        """Whether calls go straight to an OpenAI-compatible server, without litellm."""
        model, base_url = self._route()
        return direct.serves(model, base_url, self.custom_llm_provider, self.api_version)

    @property
    def effective_max_input_tokens(self) -> int | None:
        """The SDK's name for `context_window`: the input tokens a request may hold."""
        return self.context_window

    def get_token_count(
        self, messages: ChatMessages, tools: Sequence[dict[str, Any]] | None = None
    ) -> int:
        """How many tokens `messages` (Messages or chat dicts) and `tools` take for this
        model, counted offline with litellm's bundled tokenizers."""
        chat = [m if isinstance(m, dict) else m.to_chat_dict() for m in messages]
        return count_tokens(self.model, chat, tools)

    def completion(
        self,
        messages: ChatMessages,
        tools: ToolsArg | None = None,
        on_token: TokenCallbackType | None = None,
        cancel: threading.Event | None = None,
        call_context: LLMCallContext | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        """Ask the model for the next message.

        `messages` are Messages or ready chat-completions dicts. Retries rate limits,
        server errors and timeouts with exponential backoff. Streams deltas to `on_token`
        when `stream` is on (`stream=False` turns it off for this call). Setting `cancel`
        abandons the call at once (LLMCancelledError). `call_context` replaces the one set
        with `set_call_context` for this call. With `native_tool_calling` off, the tools go
        into the system prompt and calls are read from the answer (see `prompted_tools`).
        Images of Messages are sent only to a model that reads them (`vision_is_active`),
        as the SDK's `vision_enabled` does: a text-only model would refuse the request.
        Failures raise an LLMError subclass with an actionable message.
        """
        stream = kwargs.pop("stream", None)
        enable_streaming = self.stream if stream is None else bool(stream)
        original_tools = tools
        chat = self._chat_dicts(messages)
        prompted = bool(tools) and not self.native_tool_calling
        if prompted:
            chat, tools = to_prompted(chat, tools or ()), None
        if self.is_caching_prompt_active():
            chat = mark_cache_points(chat)
        context = call_context or self._call_context
        request = self._request(tools, context, kwargs)
        record = self._log_record(request, context, chat)
        return self._answer(
            lambda cancel_: self._call_once(
                chat, request, enable_streaming, on_token, cancel_, prompted
            ),
            cancel,
            record,
            lambda fallback: fallback.completion(
                messages, original_tools, on_token, cancel, call_context, stream=stream, **kwargs
            ),
        )

    def _chat_dicts(self, messages: ChatMessages) -> list[dict[str, Any]]:
        """`messages` as chat-completions dicts, images left out where the model does not
        read them. A history of dicts only (an agent's) is copied as it is: one walk in C,
        not two in Python, on a path run with thousands of messages every step."""
        if set(map(type, messages)) <= _CHAT_DICT_TYPES:
            return list(messages)  # type: ignore[arg-type]
        given = self._with_images_it_reads(messages)
        return [m if isinstance(m, dict) else m.to_chat_dict() for m in given]

    def _with_images_it_reads(self, messages: ChatMessages) -> ChatMessages:
        """`messages`, without their images when this model does not read them."""
        if not any(isinstance(m, Message) and m.contains_image for m in messages):
            return messages
        if self.vision_is_active():
            return messages
        logger.info("images left out of a request: %s does not read images", self.model)
        return [_without_images(m) for m in messages]

    def uses_responses_api(self) -> bool:
        """Whether this model is best asked through OpenAI's Responses API: `api_mode` says
        so, or, in "auto", it is of OpenAI's GPT-5 family (or Codex) on OpenAI itself."""
        if self.api_mode != "auto":
            return self.api_mode == "responses"
        name = self.model.rsplit("/", 1)[-1].lower()
        return name.startswith(RESPONSES_API_FAMILIES) and self._is_openai_itself()

    def responses(
        self,
        messages: ChatMessages,
        tools: ToolsArg | None = None,
        cancel: threading.Event | None = None,
        call_context: LLMCallContext | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        """Ask the model for the next message through OpenAI's Responses API (not streamed).

        Takes what `completion` takes (messages, chat-completions tools), with the same
        retries, cancelling, errors and metrics. Nothing is stored at OpenAI: reasoning
        comes back encrypted and is passed on with the history. Only OpenAI and servers
        speaking its API answer it; another provider is an LLMBadRequestError.
        """
        model = self._responses_model()
        given = [
            m if isinstance(m, Message) else Message.from_llm_chat_message(m)
            for m in self._with_images_it_reads(messages)
        ]
        converted = to_responses_input(given)
        request: dict[str, Any] = {"model": model, "input": converted.items, "store": False}
        optional = {
            "instructions": converted.instructions,
            "tools": to_responses_tools(tools) if tools else None,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_output_tokens": self.max_output_tokens,
            "reasoning": {"effort": self.reasoning_effort} if self.reasoning_effort else None,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        if self.reasoning_effort or model.lower().startswith(REASONING_FAMILIES):
            request["include"] = ["reasoning.encrypted_content"]
        context = call_context or self._call_context
        if context.prompt_cache_key and self.caching_prompt and self._is_openai_itself():
            request["prompt_cache_key"] = context.prompt_cache_key
        request.update(kwargs)
        return self._answer(
            lambda cancel_: self._respond_once(request),
            cancel,
            self._log_record(request, context),
            lambda fallback: fallback.responses(messages, tools, cancel, call_context, **kwargs),
        )

    def _answer(
        self,
        attempt: Callable[[threading.Event | None], _Answer],
        cancel: threading.Event | None,
        record: CompletionRecord | None,
        ask_fallback: Callable[[LLM], LLMResponse],
    ) -> LLMResponse:
        """The answer of `attempt` (retried), logged when logging is on; when it fails for
        good with a transient error, the first answer of the fallback LLMs, if any."""
        try:
            response = self._with_retries(attempt, cancel)
        except LLMError as error:
            if record is not None:
                record.failed(error)
            strategy = self.fallback_strategy
            if strategy is not None and strategy.should_fallback(error):
                answer = strategy.try_fallback(self.model, error, self.metrics, ask_fallback)
                if answer is not None:
                    return answer
            raise
        if record is not None:
            record.answered(
                {
                    "id": response.id,
                    "model": self.model,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": response.finish_reason,
                            "message": response.message.to_chat_dict(),
                        }
                    ],
                    "usage": response.usage.model_dump(mode="json"),
                },
                self._cost(response.usage),
                response.usage.model_dump(),
            )
        return response

    def _log_record(
        self,
        request: dict[str, Any],
        context: LLMCallContext,
        messages: list[dict[str, Any]] | None = None,
    ) -> CompletionRecord | None:
        """What to log of a call about to be made (the chat `messages` apart from the rest
        of the request); None, and nothing else done, when logging is off."""
        if not self.log_completions:
            return None
        from ohtui.sdk.llm.completion_log import CompletionRecord  # only when logging

        key = self.maskable_key
        return CompletionRecord(
            folder=self.log_completions_folder,
            model=self.model,
            request=request if messages is None else {**request, "messages": messages},
            context_window=self.context_window or 0,
            secrets=(key,) if key else (),
            mask=context.mask,
        )

    def _with_retries(
        self, attempt: Callable[[threading.Event | None], _Answer], cancel: threading.Event | None
    ) -> LLMResponse:
        """Run `attempt` until it answers, retrying what is worth retrying with backoff."""
        tries = 0
        while True:
            started = time.monotonic()
            for announce in self._attempt_listeners:
                announce(tries + 1)
            try:
                if cancel is None:
                    answer = attempt(None)
                else:
                    answer = _run_cancellable(lambda: attempt(cancel), cancel, self.model)
            except LLMError as error:
                if not error.retryable or tries >= self.num_retries:
                    if tries:
                        error.message += f" (gave up after {tries + 1} attempts)"
                    raise
                wait = self._backoff(tries, error)
                logger.warning("LLM %s: %s; retry %d in %.1fs", self.model, error, tries + 1, wait)
                for listener in self._retry_listeners:
                    listener(tries + 1, wait, error)
                if cancel is not None and cancel.wait(wait):
                    raise LLMCancelledError(
                        "The LLM call was interrupted.", model=self.model
                    ) from error
                if cancel is None:
                    time.sleep(wait)
                tries += 1
                continue
            return self._record(answer, time.monotonic() - started)

    def _request(
        self, tools: ToolsArg | None, context: LLMCallContext, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """The keyword arguments of a chat-completions call, but its messages and streaming."""
        model, base_url = self._route()
        request: dict[str, Any] = {
            "model": model,
            "timeout": self._timeouts(),
            "drop_params": self.drop_params,
            "num_retries": 0,  # we retry ourselves, once, with backoff
            "max_retries": 0,  # and the openai client must not retry either
        }
        optional = {
            "api_key": self.api_key.get_secret_value() if self.api_key else None,
            "api_base": base_url,
            "api_version": self.api_version,
            "custom_llm_provider": self.custom_llm_provider,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_output_tokens,
            "reasoning_effort": self.reasoning_effort,
            "extra_headers": self.extra_headers,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        if tools:
            request["tools"] = list(tools)
        if context.prompt_cache_key and self.caching_prompt and self._is_openai_itself():
            request["prompt_cache_key"] = context.prompt_cache_key
        request.update(extra)
        return request

    def _is_openai_itself(self) -> bool:
        """Whether requests go to OpenAI's own API: other providers and OpenAI-compatible
        servers may refuse fields they do not know."""
        model, base_url = self._route()
        if base_url:
            return False
        try:
            _, provider, _, _ = litellm().get_llm_provider(
                model, custom_llm_provider=self.custom_llm_provider
            )
        except Exception:  # noqa: BLE001 - a model litellm cannot place is not OpenAI's
            return False
        return bool(provider == "openai")

    def _call_once(
        self,
        messages: list[dict[str, Any]],
        request: dict[str, Any],
        enable_streaming: bool,
        on_token: TokenCallbackType | None,
        cancel: threading.Event | None,
        prompted: bool = False,
    ) -> _Answer:
        """One chat-completions attempt; `prompted`: read tool calls from the text."""
        try:
            response = self._transport_call(
                messages=messages,
                enable_streaming=enable_streaming,
                on_token=on_token,
                cancel=cancel,
                **request,
            )
        except LLMError:
            raise
        except Exception as exc:  # every provider failure becomes one of ours
            raise map_error(exc, self) from exc
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LLMNoResponseError(
                f"Model '{self.model}' returned no message. Try again.", model=self.model
            )
        raw = choices[0].message
        message = {
            "content": getattr(raw, "content", None),
            "reasoning_content": getattr(raw, "reasoning_content", None),
            "thinking_blocks": getattr(raw, "thinking_blocks", None),
            "tool_calls": [
                {
                    "id": tc.id,
                    "function": {
                        "name": tc.function.name or "",
                        "arguments": tc.function.arguments,
                    },
                }
                for tc in (getattr(raw, "tool_calls", None) or [])
            ]
            or None,
        }
        if prompted:
            message["content"], calls = parse_answer(_text_of(message["content"]))
            message["tool_calls"] = calls or None
        answer = Message.from_llm_chat_message(message)
        self._require_answer(answer)
        return _Answer(
            answer,
            str(getattr(response, "id", "") or ""),
            _token_counts(getattr(response, "usage", None)),
            getattr(choices[0], "finish_reason", None),
        )

    def _respond_once(self, request: dict[str, Any]) -> _Answer:
        """One Responses-API attempt, through the OpenAI client."""
        try:
            import openai

            with openai.OpenAI(
                api_key=self.api_key.get_secret_value() if self.api_key else None,
                base_url=self._route()[1],
                timeout=self._timeouts(),
                max_retries=0,  # we retry ourselves
                default_headers=self.extra_headers,
            ) as client:
                response = client.responses.create(**request)
        except Exception as exc:  # every provider failure becomes one of ours
            raise map_error(exc, self) from exc
        message = message_from_response(response)
        self._require_answer(message)
        incomplete = getattr(response, "status", None) == "incomplete"
        finish = "tool_calls" if message.tool_calls else ("length" if incomplete else "stop")
        return _Answer(
            message, str(response.id or ""), responses_token_counts(response.usage), finish
        )

    def _responses_model(self) -> str:
        """The model's name at OpenAI (or a server speaking its API, such as a LiteLLM
        proxy); LLMBadRequestError for a model another provider serves."""
        model, _ = self._route()
        try:
            name, provider, _, _ = litellm().get_llm_provider(
                model, custom_llm_provider=self.custom_llm_provider
            )
        except Exception:  # noqa: BLE001 - litellm cannot place it: take the name as given
            return str(model)
        if provider not in ("openai", "litellm_proxy"):
            raise LLMBadRequestError(
                f"'{self.model}' is served by {provider}, which does not offer OpenAI's "
                "Responses API. Use completion(), or api_mode='chat'.",
                model=self.model,
            )
        return str(name)

    def _transport_call(
        self,
        *,
        messages: list[dict[str, Any]],
        enable_streaming: bool = False,
        on_token: TokenCallbackType | None = None,
        cancel: threading.Event | None = None,
        **request: Any,
    ) -> Any:
        """Send one request through `litellm_completion`; return the provider's response.

        A streamed answer is handed to `on_token` delta by delta as it arrives (abandoned
        once `cancel` is set) and returned assembled, like an unstreamed one.
        """
        if not enable_streaming:
            return litellm_completion(messages=messages, **request)
        stream = litellm_completion(
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            **request,
        )
        assembler = StreamAssembler()
        for chunk in stream:
            if cancel is not None and cancel.is_set():
                _close_quietly(stream)
                raise LLMCancelledError("The LLM call was interrupted.", model=self.model)
            delta = assembler.add(chunk)
            if on_token is not None and (
                delta.content or delta.reasoning_content or delta.tool_calls or delta.finish_reason
            ):
                on_token(delta)
        message = SimpleNamespace(**assembler.message())
        if message.tool_calls:
            message.tool_calls = [
                SimpleNamespace(id=c["id"], function=SimpleNamespace(**c["function"]))
                for c in message.tool_calls
            ]
        choice = SimpleNamespace(index=0, finish_reason=assembler.finish_reason, message=message)
        return SimpleNamespace(
            id=assembler.response_id or None, choices=[choice], usage=assembler.usage
        )

    def _require_answer(self, message: Message) -> None:
        if not (message.text or message.tool_calls or message.reasoning_content):
            raise LLMNoResponseError(
                f"'{self.model}' returned an empty answer (no text, no tool call).",
                model=self.model,
            )

    def _record(self, answer: _Answer, latency: float) -> LLMResponse:
        """Count the call and hand its answer on: every answer of either API passes here, so
        here its text is made valid (a lone surrogate becomes U+FFFD, see valid_text)."""
        response_id = answer.response_id or f"resp-{uuid.uuid4().hex[:12]}"
        with self._lock:
            metrics = self.metrics
            token_usage = metrics.add_token_usage(
                **answer.counts,
                context_window=self.context_window or 0,
                response_id=response_id,
            )
            metrics.add_cost(self._cost(token_usage))
            metrics.add_response_latency(latency, response_id)
            snapshot = metrics.get_snapshot()
        return LLMResponse(
            message=valid_model(answer.message),
            id=response_id,
            metrics=snapshot,
            usage=token_usage,
            finish_reason=answer.finish_reason,
        )

    def _cost(self, usage: TokenUsage) -> float:
        if self.input_cost_per_token is not None or self.output_cost_per_token is not None:
            return usage.prompt_tokens * (self.input_cost_per_token or 0.0) + (
                usage.completion_tokens * (self.output_cost_per_token or 0.0)
            )
        if self._price_unknown:
            return 0.0
        if self.called_directly:
            price = model_map.cost(
                self._capability_model(),
                self.custom_llm_provider,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
            )
            self._price_unknown = price is None
            return price or 0.0
        try:
            return litellm_price.cost(
                self._capability_model(),
                self.custom_llm_provider,
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
            )
        except Exception:  # noqa: BLE001 - litellm has no price for this model
            self._price_unknown = True
            return 0.0

    def _backoff(self, attempt: int, error: LLMError) -> float:
        wait = self.retry_min_wait * (self.retry_multiplier**attempt)
        if error.retry_after:
            wait = max(wait, error.retry_after)
        return min(wait, self.retry_max_wait)


def litellm_completion(**request: Any) -> Any:
    """One chat-completions call, given as litellm's keyword arguments.

    An OpenAI-compatible server (an `openai/…` model with a base URL) is called directly
    over HTTP (`direct`: litellm's per-call work grows with the history); everything else
    goes through litellm, imported on first use, its logging of the call skipped and the
    history it translated on earlier calls not given to it again (`history_splice`). Every
    completion of an LLM goes through this function, so replacing it (e.g. with
    `unittest.mock.patch`) replaces the provider.
    """
    if direct.is_direct(request):
        return direct.completion(**request)
    with unlogged():
        return history_splice.completion(litellm(), {**request, **call_options()})


def _without_images(message: Message | dict[str, Any]) -> Message | dict[str, Any]:
    """A Message without its images (a chat dict is sent as given)."""
    if isinstance(message, dict) or not message.contains_image:
        return message
    kept = [part for part in message.content if not isinstance(part, ImageContent)]
    return message.model_copy(update={"content": kept})


def _text_of(content: Any) -> str | None:
    """An answer's content as text (providers may answer with a list of text parts)."""
    if isinstance(content, list):
        return "".join(str(_part_text(part)) for part in content)
    return content if content is None else str(content)


def _part_text(part: Any) -> str:
    text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
    return str(text or "")


def _token_counts(usage: Any) -> dict[str, int]:
    """The token counts of a provider's usage record, as `Metrics.add_token_usage` takes them."""

    def number(obj: Any, name: str) -> int:
        value = getattr(obj, name, None) if obj is not None else None
        if value is None and isinstance(obj, dict):
            value = obj.get(name)
        return int(value or 0)

    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    cache_read = number(prompt_details, "cached_tokens") or number(usage, "cache_read_input_tokens")
    return {
        "prompt_tokens": number(usage, "prompt_tokens"),
        "completion_tokens": number(usage, "completion_tokens"),
        "cache_read_tokens": cache_read,
        "cache_write_tokens": number(usage, "cache_creation_input_tokens"),
        "reasoning_tokens": number(completion_details, "reasoning_tokens"),
    }


def _run_cancellable(fn: Callable[[], T], cancel: threading.Event, model: str) -> T:
    """Run `fn` on a helper thread; return its result, or raise as soon as `cancel` is set."""
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="llm-call", daemon=True).start()
    while not done.wait(0.05):
        if cancel.is_set():
            raise LLMCancelledError(f"The call to '{model}' was interrupted.", model=model)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _close_quietly(stream: Any) -> None:
    close = getattr(stream, "close", None) or getattr(
        getattr(stream, "completion_stream", None), "close", None
    )
    if callable(close):
        try:
            close()
        except Exception:  # the stream is being abandoned anyway
            logger.debug("closing an abandoned stream failed", exc_info=True)


def same_llm(a: LLM, b: LLM) -> bool:
    """Whether two LLMs are configured alike (same class, every field, API key included)."""
    key = {"expose_secrets": True}
    return type(a) is type(b) and a.model_dump(context=key) == b.model_dump(context=key)
