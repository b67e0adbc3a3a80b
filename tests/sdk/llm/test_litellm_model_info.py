"""litellm's model-map lookups are remembered per model (issue 30: they were half a
millisecond of every call through litellm): the requests and the cost are what they were
without it, a change to litellm's map is seen at once, and no caller can spoil another's
answer. A call's cost is litellm's, read from prices learned once per model."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from llm_server import THINK_TOOLS, Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM
from ohtui.sdk.llm import history_splice, litellm_model_info
from ohtui.sdk.llm._litellm import litellm
from ohtui.sdk.llm.wire import EncodedMessage

MODELS = ("hosted_vllm/test-model", "anthropic/claude-sonnet-4-5")
HOLDERS = ("litellm.utils", "litellm.responses.bridge_check")


def make_llm(server: ScriptedLLMServer, model: str) -> LLM:
    base = server.base_url.removesuffix("/v1") if model.startswith("anthropic/") else None
    return LLM(
        model=model, base_url=base or server.base_url, api_key="sk-test", num_retries=0, timeout=10
    )


def history(turns: int) -> list[Any]:
    messages: list[Any] = [
        EncodedMessage({"role": "system", "content": "You are terse."}),
        EncodedMessage({"role": "user", "content": "Think a lot."}),
    ]
    for i in range(turns):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "think", "arguments": "{}"}}
        messages.append(
            EncodedMessage({"role": "assistant", "content": None, "tool_calls": [call]})
        )
        messages.append(
            EncodedMessage(
                {"role": "tool", "tool_call_id": f"c{i}", "name": "think", "content": "ok"}
            )
        )
    return messages


@pytest.fixture(autouse=True)
def fresh_splicers() -> None:
    history_splice._splicers.clear()


def test_litellm_loaded_by_us_remembers_its_model_lookups() -> None:
    utils = importlib.import_module("litellm.utils")
    litellm()
    for name in HOLDERS:
        held = importlib.import_module(name).get_model_info_helper
        assert getattr(held, "_ohtui_memo", False), name
    first = utils.get_model_info_helper("claude-sonnet-4-5", "anthropic")
    first["max_input_tokens"] = -1  # a caller changing its copy (litellm's callers do)
    again = utils.get_model_info_helper("claude-sonnet-4-5", "anthropic")
    assert again["max_input_tokens"] > 0
    assert again == utils.get_model_info_helper.__wrapped__("claude-sonnet-4-5", "anthropic")
    with pytest.raises(Exception) as unknown:
        utils.get_model_info_helper("no-such-model-anywhere", "hosted_vllm")
    with pytest.raises(type(unknown.value)):  # fails again, the same way
        utils.get_model_info_helper("no-such-model-anywhere", "hosted_vllm")


def test_a_model_registered_with_litellm_is_seen_at_once() -> None:
    module = litellm()
    utils = importlib.import_module("litellm.utils")
    name = "ohtui-test/registered-model"
    with pytest.raises(Exception):  # noqa: B017 - litellm's own error type
        utils.get_model_info_helper(name, "hosted_vllm")
    try:
        module.register_model(
            {
                name: {
                    "max_input_tokens": 1234,
                    "input_cost_per_token": 1e-6,
                    "output_cost_per_token": 2e-6,
                    "litellm_provider": "hosted_vllm",
                    "mode": "chat",
                }
            }
        )
        assert utils.get_model_info_helper(name, "hosted_vllm")["max_input_tokens"] == 1234
    finally:
        module.model_cost.pop(name, None)
        utils._invalidate_model_cost_lowercase_map()
    with pytest.raises(Exception):  # noqa: B017
        utils.get_model_info_helper(name, "hosted_vllm")


def test_remembering_keys_by_arguments_and_the_maps_version() -> None:
    calls: list[tuple[Any, ...]] = []
    version = [0]

    def lookup(model: str, provider: str | None = None) -> dict[str, Any]:
        calls.append((model, provider))
        if model == "bad":
            raise KeyError(model)
        return {"key": model, "v": version[0]}

    memo = litellm_model_info.remembering(lookup, lambda: version[0])
    assert memo("a", "p") == {"key": "a", "v": 0}
    assert memo("a", "p") == {"key": "a", "v": 0}
    assert memo("a", provider="q")["key"] == "a"
    assert calls == [("a", "p"), ("a", "q")]
    for _ in range(2):
        with pytest.raises(KeyError):
            memo("bad")
    assert calls.count(("bad", None)) == 1
    version[0] = 1  # the map changed
    assert memo("a", "p") == {"key": "a", "v": 1}
    assert calls.count(("a", "p")) == 2


@pytest.mark.parametrize("model", MODELS)
def test_requests_and_cost_are_what_they_were_without_the_memo(
    llm_server: ScriptedLLMServer, model: str
) -> None:
    llm_server.set_default(
        Reply(
            tool_calls=(ToolCall("think", "{}"),),
            usage={"prompt_tokens": 1200, "completion_tokens": 30},
        )
    )
    utils = importlib.import_module("litellm.utils")
    bridge = importlib.import_module("litellm.responses.bridge_check")
    litellm()
    memo = utils.get_model_info_helper
    plain = memo.__wrapped__
    bodies: dict[bool, list[dict[str, Any]]] = {}
    costs: dict[bool, list[float]] = {}
    try:
        for remembered in (False, True):
            utils.get_model_info_helper = bridge.get_model_info_helper = (
                memo if remembered else plain
            )
            history_splice._splicers.clear()
            llm = make_llm(llm_server, model)
            before = len(llm_server.requests)
            for turns in (3, 4, 5):
                llm.completion(history(turns), tools=THINK_TOOLS)
                costs.setdefault(remembered, []).append(llm.metrics.accumulated_cost)
            bodies[remembered] = llm_server.requests[before:]
    finally:
        utils.get_model_info_helper = bridge.get_model_info_helper = memo
    assert bodies[True] == bodies[False]
    assert costs[True] == costs[False]
    if model.startswith("anthropic/"):  # litellm prices Claude; the test model is unpriced
        assert costs[True][0] > 0


@pytest.mark.parametrize(
    "model", ["claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", "gpt-4o", "gemini/gemini-2.5-pro"]
)
def test_a_calls_cost_is_litellms_without_asking_it_each_time(model: str) -> None:
    from ohtui.sdk.llm import litellm_price

    usages = [(1200, 30, 0, 0), (50_000, 2_000, 40_000, 3_000), (150_000, 100, 100_000, 20_000)]
    usages.append((250_000, 10, 0, 0))  # Gemini's second tier: litellm is asked
    for usage in usages:
        expected = litellm_price.litellm_cost(model, None, *usage)
        assert litellm_price.cost(model, None, *usage) == pytest.approx(expected, rel=1e-9)
    price = litellm_price.linear_price(model, None)
    assert price is not None and price.prompt > 0  # below the tier, litellm is not asked
    module = litellm()
    asked: list[object] = []
    real = module.cost_per_token
    module.cost_per_token = lambda **kw: asked.append(kw) or real(**kw)
    try:
        litellm_price.cost(model, None, 1200, 30, 0, 0)
    finally:
        module.cost_per_token = real
    assert asked == []


def test_an_unpriced_or_tiered_model_is_priced_by_litellm() -> None:
    from ohtui.sdk.llm import litellm_price

    assert litellm_price.linear_price("test-model", "hosted_vllm") is None
    with pytest.raises(Exception):  # noqa: B017 - litellm's own error type
        litellm_price.cost("test-model", "hosted_vllm", 10, 1, 0, 0)
    assert litellm_price._first_tier({"input_cost_per_token_above_128k_tokens": 1e-6}) == 128_000
    assert litellm_price._first_tier({"tiered_pricing": [{"range": [0, 1]}]}) == 0
