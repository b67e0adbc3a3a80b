"""Tool: a serializable reference to a registered tool, by name, with its parameters."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, field_serializer


class Tool(BaseModel):
    """A tool spec the agent resolves at run time, e.g. `Tool(name="terminal")`."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The name the tool is registered under.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments for the tool's create()."
    )

    @field_serializer("params")
    def _schema_class_as_json(
        self, params: dict[str, Any], info: SerializationInfo
    ) -> dict[str, Any]:
        # A response schema given as a model class is saved (and sent) as its JSON schema.
        schema = params.get("response_schema")
        if info.mode != "json" or not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            return params
        return {**params, "response_schema": schema.model_json_schema()}
