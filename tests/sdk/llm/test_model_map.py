"""litellm's model map read without litellm: the same windows and prices litellm gives, and
a model called directly never imports litellm."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ohtui.sdk.llm import model_map
from ohtui.sdk.llm._litellm import litellm

ROOT = Path(__file__).resolve().parents[3]
MODELS = [
    ("gpt-4o", None),
    ("openai/gpt-4o", None),
    ("gpt-4o-mini", "openai"),
    ("anthropic/claude-sonnet-4-5", None),
    ("claude-sonnet-4-5-20250929", None),
    ("deepseek/deepseek-chat", None),
    ("gemini/gemini-2.5-pro", None),
    ("azure/gpt-4o", None),
]


@pytest.mark.parametrize(("model", "provider"), MODELS)
def test_windows_and_prices_are_litellms(
    model: str, provider: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = litellm().get_model_info(model, custom_llm_provider=provider)
    monkeypatch.setattr(model_map._litellm, "loaded", lambda: None)  # read from the file
    assert model_map.context_window(model, provider) == (
        info.get("max_input_tokens") or info.get("max_tokens")
    )
    theirs = sum(
        litellm().cost_per_token(
            model=model,
            prompt_tokens=1000,
            completion_tokens=100,
            cache_read_input_tokens=200,
            custom_llm_provider=provider,
        )
    )
    ours = model_map.cost(
        model, provider, prompt_tokens=1000, completion_tokens=100, cache_read_tokens=200
    )
    assert ours == pytest.approx(theirs, rel=1e-6)


def test_a_model_the_map_does_not_name_has_no_window_or_price() -> None:
    for model in ("openai/test-model", "hosted_vllm/llama-local", "ollama_chat/qwen-unknown"):
        assert model_map.model_info(model) is None
        assert model_map.context_window(model) is None
        assert model_map.cost(model, None, prompt_tokens=10, completion_tokens=1) is None
    # Not another provider's entry under a stripped prefix.
    assert model_map.model_info("groq/gpt-4o") is None


def test_a_turn_with_a_model_called_directly_never_imports_litellm(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from llm_server import ScriptedLLMServer
        from ohtui.sdk import LLM, Agent, Conversation, LLMSummarizingCondenser, Tool
        with ScriptedLLMServer() as server:
            server.reply_text("Hi.")
            for model in ("openai/test-model", "openai/gpt-4o"):
                llm = LLM(model=model, base_url=server.base_url, api_key="k", usage_id="agent")
                condenser = LLMSummarizingCondenser(llm=llm.model_copy(), max_size=80)
                agent = Agent(llm=llm, tools=[Tool(name="terminal")], condenser=condenser)
                conversation = Conversation(agent, workspace={str(tmp_path)!r}, visualizer=None)
                conversation.send_message("hello")
                server.reply_text("Hi.")
                conversation.run()
                print(model, llm.context_window, llm.metrics.accumulated_cost > 0)
        print("litellm" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split("\n")[:3] == [
        "openai/test-model None False",
        "openai/gpt-4o 128000 True",  # known to the map: its window and price
        "False",
    ], out.stderr


def test_the_token_bound_is_never_under_the_count() -> None:
    from ohtui.sdk import LLM, Message, MessageEvent, TextContent
    from ohtui.sdk.context.condenser.utils import get_total_token_count, token_upper_bound
    from ohtui.sdk.event import SystemPromptEvent
    from ohtui.sdk.llm.message import ImageContent
    from ohtui.sdk.tool.builtins import FinishTool, ThinkTool

    texts = ["hello", "héllo wörld ✓ 日本語のテキスト", "x" * 5000, "a b c " * 300, "🙂" * 50]
    events = [
        SystemPromptEvent(
            system_prompt=TextContent(text="You are terse."),
            tools=[*FinishTool.create(), *ThinkTool.create()],
        ),
        *(
            MessageEvent(
                source="user", llm_message=Message(role="user", content=[TextContent(text=t)])
            )
            for t in texts
        ),
        MessageEvent(
            source="user",
            llm_message=Message(
                role="user",
                content=[ImageContent(image_urls=["https://example.invalid/a.png"])],
            ),
        ),
    ]
    llm = LLM(model="gpt-4o", api_key="k", usage_id="agent")
    for end in range(1, len(events) + 1):
        assert token_upper_bound(events[:end]) >= get_total_token_count(events[:end], llm)


def test_once_litellm_is_loaded_its_map_is_read_and_our_copy_released() -> None:
    module = litellm()
    module.model_cost["ohtui-test/only-in-litellms-map"] = {"max_input_tokens": 1234}
    try:
        assert model_map.context_window("ohtui-test/only-in-litellms-map") == 1234
    finally:
        del module.model_cost["ohtui-test/only-in-litellms-map"]


def test_the_map_is_not_kept_once_a_model_was_looked_up() -> None:
    # The whole map is ~5 MB of objects; a session keeps only the entries it asked for.
    code = textwrap.dedent(
        """
        import gc, tracemalloc
        from ohtui.sdk.llm import model_map
        tracemalloc.start()
        assert model_map.context_window("gpt-4o")
        assert model_map.cost("gpt-4o", None, prompt_tokens=10, completion_tokens=1)
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
        assert peak > 2_000_000, peak  # the map was read ...
        assert held < 500_000, held  # ... and let go
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
