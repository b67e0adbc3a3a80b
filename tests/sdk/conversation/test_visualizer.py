"""The default console visualizer: a titled block per event, with the LLM's token and cost
figures under the events an LLM call produced (that call's, and the running totals)."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from ohtui.sdk import (
    ActionEvent,
    AgentErrorEvent,
    DefaultConversationVisualizer,
    Message,
    MessageEvent,
    ObservationEvent,
    PauseEvent,
    TextContent,
    UserRejectObservation,
)
from ohtui.sdk.conversation import ConversationStats
from ohtui.sdk.event import CondensationRequest, ConversationStateUpdateEvent
from ohtui.sdk.llm import MessageToolCall, Metrics
from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation


def visualizer_with(
    *usages: dict[str, int | str], cost: float = 0.0
) -> tuple[DefaultConversationVisualizer, io.StringIO]:
    """A visualizer printing to a buffer, over stats with one LLM that made these calls."""
    metrics = Metrics(model_name="test-model")
    for usage in usages:
        metrics.add_token_usage(**usage)  # type: ignore[arg-type]
    if cost:
        metrics.add_cost(cost)
    buffer = io.StringIO()
    visualizer = DefaultConversationVisualizer(console=Console(file=buffer, width=120))
    visualizer.initialize(
        SimpleNamespace(stats=ConversationStats(usage_to_metrics={"agent": metrics}))
    )
    return visualizer, buffer


def action(response_id: str, call_id: str = "c1", runnable: bool = True) -> ActionEvent:
    call = MessageToolCall(id=call_id, name="terminal", arguments='{"command": "ls"}')
    return ActionEvent(
        thought=[TextContent(text="Listing.")],
        action=TerminalAction(command="ls") if runnable else None,
        tool_name="terminal",
        tool_call_id=call_id,
        tool_call=call,
        llm_response_id=response_id,
    )


def agent_says(text: str, response_id: str) -> MessageEvent:
    return MessageEvent(
        source="agent",
        llm_message=Message(role="assistant", content=[TextContent(text=text)]),
        llm_response_id=response_id,
    )


def user_says(text: str, source: str = "user") -> MessageEvent:
    return MessageEvent(
        source=source,  # type: ignore[arg-type]
        llm_message=Message(role="user", content=[TextContent(text=text)]),
    )


def shown(visualizer: DefaultConversationVisualizer, buffer: io.StringIO, event: object) -> str:
    buffer.seek(0)
    buffer.truncate()
    visualizer.on_event(event)  # type: ignore[arg-type]
    return buffer.getvalue()


def test_an_llm_event_shows_its_calls_figures_and_the_totals() -> None:
    visualizer, buffer = visualizer_with(
        {"prompt_tokens": 4390, "completion_tokens": 144, "response_id": "r1"},
        {"prompt_tokens": 4630, "completion_tokens": 114, "response_id": "r2"},
    )
    out = shown(visualizer, buffer, action("r2"))
    assert (
        "Tokens: ↑ input 4.63K (total 9.02K) • cache hit 0.00% (total 0.00%) • "
        "↓ output 114 (total 258) • $ (total 0.00)"
    ) in out


def test_reasoning_and_cache_hits_are_shown_per_call_too() -> None:
    visualizer, buffer = visualizer_with(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "cache_read_tokens": 100,
            "reasoning_tokens": 200,
            "response_id": "r1",
        },
        {
            "prompt_tokens": 2000,
            "completion_tokens": 200,
            "cache_read_tokens": 1000,
            "reasoning_tokens": 50,
            "response_id": "r2",
        },
        cost=0.0234,
    )
    out = shown(visualizer, buffer, agent_says("Done.", "r2"))
    assert "cache hit 50.00% (total 36.67%)" in out
    assert "reasoning 50 (total 250)" in out
    assert "$ (total 0.0234)" in out


def test_events_no_known_call_produced_show_totals_only() -> None:
    visualizer, buffer = visualizer_with(
        {"prompt_tokens": 1000, "completion_tokens": 100, "response_id": "r1"},
    )
    totals = "Tokens: ↑ input (total 1K) • cache hit (total 0.00%) • ↓ output (total 100)"
    assert totals in shown(visualizer, buffer, user_says("Hello"))
    assert totals in shown(visualizer, buffer, action("an-older-call"))


def test_an_earlier_calls_event_shows_that_calls_figures() -> None:
    visualizer, buffer = visualizer_with(
        {"prompt_tokens": 1000, "completion_tokens": 100, "response_id": "r1"},
        {"prompt_tokens": 2000, "completion_tokens": 200, "response_id": "r2"},
    )
    assert "↑ input 1K (total 3K)" in shown(visualizer, buffer, agent_says("Earlier.", "r1"))


def test_a_call_is_found_by_its_response_id_across_llms_not_by_position() -> None:
    # The condenser's call came first; the agent's LLM is listed last and called last.
    condenser, agent = Metrics(model_name="m"), Metrics(model_name="m")
    condenser.add_token_usage(prompt_tokens=2000, completion_tokens=50, response_id="cond")
    agent.add_token_usage(prompt_tokens=999, completion_tokens=9, response_id="main")
    stats = ConversationStats(usage_to_metrics={"condenser": condenser, "agent": agent})
    assert stats.get_combined_metrics().token_usages[-1].response_id == "main"
    buffer = io.StringIO()
    visualizer = DefaultConversationVisualizer(console=Console(file=buffer, width=120))
    visualizer.initialize(SimpleNamespace(stats=stats))
    out = shown(visualizer, buffer, action("cond"))
    assert "↑ input 2K (total 3K)" in out
    assert "↓ output 50 (total 59)" in out


def test_a_cache_rate_never_exceeds_100_percent() -> None:
    # Some providers count cached reads apart from the prompt tokens.
    visualizer, buffer = visualizer_with(
        {"prompt_tokens": 13, "completion_tokens": 568, "cache_read_tokens": 117_654},
    )
    out = shown(visualizer, buffer, user_says("Hi"))
    assert "cache hit (total 99.99%)" in out


def test_large_counts_are_abbreviated() -> None:
    for tokens, expected in [
        (999, "999"),
        (1000, "1K"),
        (1500, "1.5K"),
        (89_080, "89.08K"),
        (1_000_000, "1M"),
        (1_234_567, "1.23M"),
        (1_000_000_000, "1B"),
    ]:
        visualizer, buffer = visualizer_with({"prompt_tokens": tokens, "completion_tokens": 1})
        assert f"↑ input (total {expected})" in shown(visualizer, buffer, user_says("x"))


def test_parallel_calls_of_one_response_show_its_figures_once() -> None:
    visualizer, buffer = visualizer_with(
        {"prompt_tokens": 1000, "completion_tokens": 100, "response_id": "r1"},
        {"prompt_tokens": 2000, "completion_tokens": 200, "response_id": "r2"},
    )
    first = shown(visualizer, buffer, action("r2", "c1"))
    observation = shown(
        visualizer,
        buffer,
        ObservationEvent(
            observation=TerminalObservation.from_text("a.txt"),
            action_id="a1",
            tool_name="terminal",
            tool_call_id="c1",
        ),
    )
    second = shown(visualizer, buffer, action("r2", "c2"))
    assert "↑ input 2K (total 3K)" in first
    assert "Tokens:" not in observation
    assert "↑ input (total 3K)" in second


def test_nothing_about_tokens_before_any_llm_call() -> None:
    visualizer, buffer = visualizer_with()
    out = shown(visualizer, buffer, user_says("First message"))
    assert "First message" in out
    assert "Tokens:" not in out


def test_each_event_is_titled_by_what_it_is() -> None:
    visualizer, buffer = visualizer_with()
    cases = [
        (user_says("Please"), "Message from User"),
        (user_says("Nudge", source="environment"), "Message from Environment"),
        (agent_says("Sure", "r1"), "Message from Agent"),
        (action("r1"), "Agent Action"),
        (action("r1", runnable=False), "Agent Action (Not Executed)"),
        (
            UserRejectObservation(
                action_id="a", tool_name="terminal", tool_call_id="c1", rejection_reason="No."
            ),
            "User Rejected Action",
        ),
        (
            UserRejectObservation(
                action_id="a",
                tool_name="terminal",
                tool_call_id="c1",
                rejection_reason="Blocked.",
                rejection_source="hook",
            ),
            "Hook Rejected Action",
        ),
        (AgentErrorEvent(error="bad", tool_name="t", tool_call_id="c"), "Agent Error"),
        (PauseEvent(), "User Paused"),
        (CondensationRequest(), "Condensation Request"),
    ]
    for event, title in cases:
        out = shown(visualizer, buffer, event)
        assert out.lstrip("─ \n").startswith(title), (title, out)
    assert "Message from User" not in shown(visualizer, buffer, user_says("Nudge", "environment"))


def test_state_updates_and_skipped_user_messages_are_not_shown() -> None:
    buffer = io.StringIO()
    visualizer = DefaultConversationVisualizer(
        skip_user_messages=True, console=Console(file=buffer, width=100)
    )
    visualizer.on_event(ConversationStateUpdateEvent(key="execution_status", value="paused"))
    visualizer.on_event(user_says("Human input"))
    assert buffer.getvalue() == ""
    visualizer.on_event(user_says("Framework nudge", source="environment"))
    assert "Framework nudge" in buffer.getvalue()


def test_what_it_prints_cannot_drive_the_terminal() -> None:
    """The model's words, a command's output: shown with stand-ins for their controls."""
    visualizer, buffer = visualizer_with()
    attack = "A\x1b]52;c;eA==\x07B\x1b[2JC\x9b2JD\u202eE\rF\bG"
    said = shown(visualizer, buffer, agent_says(f"Hello {attack}", "r1"))
    # (Rich itself drops BEL, CR and backspace from the text it is given.)
    assert "Hello A␛]52;c;eA==B␛[2JC\ufffd2JD\ufffdEFG" in said
    observation = ObservationEvent(
        observation=TerminalObservation.from_text(f"out {attack}", command="x", exit_code=0),
        action_id="a1",
        tool_name="terminal",
        tool_call_id="c1",
    )
    printed = shown(visualizer, buffer, observation)
    assert "out A␛]52" in printed
    for text in (said, printed):
        assert not {"\x1b", "\x07", "\x9b", "\u202e", "\r", "\b"} & set(text)
