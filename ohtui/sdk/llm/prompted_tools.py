"""Tool calls written in the text, for models or servers without native tool calling.

With `LLM(native_tool_calling=False)` the tools are described in the system prompt instead
of being sent as `tools`; the model writes each call as a `<tool_call>` block holding a JSON
object, and the answer is turned back into ordinary tool calls. The history is rewritten to
match: earlier calls become such blocks in the assistant's text, and tool results become
user messages, so the model sees one consistent format.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(re.escape(OPEN) + r"\s*(.*?)\s*" + re.escape(CLOSE), re.DOTALL)
INSTRUCTIONS = """\
# Calling tools
You can call the tools listed below. To call one, write a block like this in your answer,
with a JSON object naming the tool and giving its arguments:

{open}
{{"name": "<tool name>", "arguments": {{"<parameter>": "<value>"}}}}
{close}

Write one block per call and nothing after your last block: each call's result comes back
to you in the next message, inside <tool_result> tags. When you need no tool, answer in
plain text.

Tools (JSON schemas of their arguments):
{tools}"""


def instructions(tools: Sequence[dict[str, Any]]) -> str:
    """The system prompt's part that describes `tools` (chat-completions tool dicts)."""
    described = [
        json.dumps(
            {
                "name": function.get("name"),
                "description": function.get("description", ""),
                "parameters": function.get("parameters", {}),
            },
            ensure_ascii=False,
        )
        for tool in tools
        if (function := tool.get("function") or {})
    ]
    return INSTRUCTIONS.format(open=OPEN, close=CLOSE, tools="\n".join(described))


def to_prompted(chat: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> list[dict]:
    """The chat-completions messages rewritten for a model that reads tools from the prompt."""
    guide = instructions(tools)
    out: list[dict[str, Any]] = []
    for message in chat:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            calls = [_block(call) for call in message["tool_calls"]]
            text = _text(message.get("content"))
            rewritten = {k: v for k, v in message.items() if k != "tool_calls"}
            rewritten["content"] = "\n".join([text, *calls] if text else calls)
            out.append(rewritten)
        elif role == "tool":
            name = message.get("name") or "tool"
            body = _text(message.get("content"))
            result = f'<tool_result name="{name}" id="{message.get("tool_call_id", "")}">'
            out.append({"role": "user", "content": f"{result}\n{body}\n</tool_result>"})
        else:
            out.append(message)
    if out and out[0].get("role") == "system":
        out[0] = {**out[0], "content": f"{_text(out[0].get('content'))}\n\n{guide}"}
    else:
        out.insert(0, {"role": "system", "content": guide})
    return out


def parse_answer(content: str | None) -> tuple[str | None, list[dict[str, Any]]]:
    """The answer's text without its call blocks, and the calls (chat-completions tool call
    dicts). A block that is not a JSON object with a "name" stays in the text, so the model
    sees what it wrote."""
    if not content or OPEN not in content:
        return content, []
    calls: list[dict[str, Any]] = []

    def take(match: re.Match[str]) -> str:
        try:
            data = json.loads(match.group(1))
        except ValueError:
            return match.group(0)
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return match.group(0)
        arguments = data.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": data["name"], "arguments": arguments},
            }
        )
        return ""

    text = _BLOCK.sub(take, content).strip()
    return text or None, calls


def _block(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments: Any = json.loads(raw)
    except ValueError:
        arguments = raw  # passed on as written: the model sees its own call
    payload = json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN}\n{payload}\n{CLOSE}"


def _text(content: Any) -> str:
    """A message's text, whether its content is a string or a list of parts."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""
