"""Schema, Action and Observation: the typed arguments and results of tools."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import ConfigDict, Field, PrivateAttr

from ohtui.sdk.llm.message import ImageContent, TextContent, text_of
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from rich.text import Text


class Schema(DiscriminatedUnionMixin):
    """A frozen model whose fields a tool exchanges with the model (Action, Observation)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    @classmethod
    def to_mcp_schema(cls) -> dict[str, Any]:
        """The JSON schema of the fields, self-contained and without titles (as MCP wants)."""
        return simplify_schema(cls.model_json_schema())


class Action(Schema):
    """The validated arguments of one tool call. Subclass it with documented fields."""

    _structured_output: dict[str, Any] | None = PrivateAttr(default=None)

    @property
    def structured_output(self) -> dict[str, Any] | None:
        """The call's answer to its tool's response schema (JSON), if the tool has one."""
        return self._structured_output

    def set_structured_output(self, output: dict[str, Any] | None) -> None:
        """Keep the call's structured output with the action (it is not one of its fields:
        the action's own arguments stay as the tool defines them)."""
        self._structured_output = output

    @property
    def visualize(self) -> Text:
        """The action's class, then its fields, one per line."""
        from rich.text import Text

        text = Text(f"{type(self).__name__}\n", style="bold")
        for name, value in self.model_dump(exclude={"kind"}).items():
            if value in (None, "", [], {}):
                continue
            text.append(f"{name}: ", style="bold")
            text.append(f"{value}\n")
        return text


class Observation(Schema):
    """What a tool returned. `content` is what the model sees; subclasses add typed fields."""

    content: list[TextContent | ImageContent] = Field(default_factory=list)
    is_error: bool = False

    @classmethod
    def from_text(cls, text: str, is_error: bool = False, **fields: Any) -> Self:
        """Build an observation whose content is one text part."""
        return cls(content=[TextContent(text=text)], is_error=is_error, **fields)

    @property
    def text(self) -> str:
        """The text of the content."""
        return text_of(self.content)

    @property
    def to_llm_content(self) -> Sequence[TextContent | ImageContent]:
        """The content sent back to the model as the tool result."""
        if self.is_error and self.content:
            return [TextContent(text="[The tool reported an error]\n"), *self.content]
        return self.content

    @property
    def visualize(self) -> Text:
        """The observation's text, red when it is an error."""
        from rich.text import Text

        return Text(self.text, style="red" if self.is_error else "")


_DATA_KEYS = frozenset({"default", "examples", "enum", "const"})  # values, not sub-schemas


def simplify_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline `$ref`s, drop titles and turn `X | None` into an optional `X`.

    Several providers reject `$defs`, `anyOf` with null, or stray keys; this keeps schemas
    to the subset all of them accept. Recursive models cannot be inlined: ValueError.
    """
    defs = schema.get("$defs", {})

    def walk(node: Any, refs: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(n, refs) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in refs:
                raise ValueError(
                    f"tool argument schemas cannot be recursive ({' -> '.join((*refs, name))})"
                )
            target = {**copy.deepcopy(defs[name]), **{k: v for k, v in node.items() if k != "$ref"}}
            return walk(target, (*refs, name))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs"):
                continue
            if key in _DATA_KEYS:
                out[key] = value
            elif key == "properties":
                out[key] = {name: walk(prop, refs) for name, prop in value.items()}
            else:
                out[key] = walk(value, refs)
        any_of = out.get("anyOf")
        if isinstance(any_of, list):
            non_null = [s for s in any_of if s.get("type") != "null"]
            if len(non_null) == 1 and len(non_null) < len(any_of):
                out.pop("anyOf")
                out = {**non_null[0], **out}
                if out.get("default", ...) is None:
                    out.pop("default")
        return out

    result = walk(schema, ())
    result.setdefault("properties", {})
    result["type"] = "object"
    return result
