"""Structured output: a schema whose fields the model must fill when it calls a tool.

A tool spec's `params={"response_schema": Model}` (a pydantic model class, or a JSON schema
of an object) adds the schema's fields to the tool's parameters. Those arguments are split
off the call, validated against the schema and kept with the action (`structured_output`),
so the caller reads them back typed with `tool.parse_response(action)`.
"""

from __future__ import annotations

import copy
import threading
from typing import Any, TypeAlias

from pydantic import BaseModel

ResponseSchema: TypeAlias = type[BaseModel] | dict[str, Any]
"""A pydantic model class, or a JSON schema describing an object."""

RESERVED_RESPONSE_FIELDS = frozenset({"kind", "security_risk", "structured_output", "summary"})
"""Argument names every tool call may carry already: a response schema cannot use them."""

_ALLOWED_TOP_LEVEL = frozenset(
    {
        "$anchor",
        "$comment",
        "$defs",
        "$id",
        "$schema",
        "additionalProperties",
        "default",
        "deprecated",
        "description",
        "examples",
        "properties",
        "readOnly",
        "required",
        "title",
        "type",
        "writeOnly",
    }
)
"""Top-level keywords a response schema may use: its fields are merged into the tool's
parameters, so combinators (anyOf, allOf...) at the top have nothing to merge into."""

_model_schemas: dict[type[BaseModel], dict[str, Any]] = {}
_model_schemas_lock = threading.Lock()


class ResponseSchemaError(ValueError):
    """A response schema that cannot be used, or output that does not match it."""


def schema_json(schema: ResponseSchema) -> dict[str, Any]:
    """The JSON schema of `schema` (a private copy), checked to describe an object."""
    if isinstance(schema, dict):
        found = copy.deepcopy(schema)
        _check_json_schema(found)
    elif isinstance(schema, type) and issubclass(schema, BaseModel):
        with _model_schemas_lock:  # model_json_schema() once per class
            cached = _model_schemas.get(schema)
            if cached is None:
                cached = schema.model_json_schema()
                _model_schemas[schema] = cached
        found = copy.deepcopy(cached)
    else:
        raise ResponseSchemaError(
            f"response_schema must be a pydantic model class or a JSON schema (a dict), got "
            f"{type(schema).__name__}"
        )
    if found.get("type") != "object":
        raise ResponseSchemaError(
            'response_schema must describe a JSON object ("type": "object") with named properties'
        )
    return found


def parameters_of(schema: ResponseSchema) -> dict[str, Any]:
    """The properties and required names the schema adds to a tool's parameters, with its
    `$defs` references written out in place (the tool's parameters carry no `$defs`)."""
    found = schema_json(schema)
    properties = found.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise ResponseSchemaError("response_schema must define named properties")
    unsupported = set(found) - _ALLOWED_TOP_LEVEL
    if unsupported:
        raise ResponseSchemaError(
            f"response_schema has unsupported top-level keywords {sorted(unsupported)}: its "
            "properties are merged into the tool's parameters; describe one object"
        )
    if found.get("additionalProperties") not in (None, False):
        raise ResponseSchemaError(
            "response_schema cannot allow extra fields (additionalProperties): name each field"
        )
    required = list(found.get("required", []))
    unnamed = set(required) - set(properties)
    if unnamed:
        raise ResponseSchemaError(
            f"response_schema requires {sorted(unnamed)}, which are not among its properties"
        )
    reserved = set(properties) & RESERVED_RESPONSE_FIELDS
    if reserved:
        raise ResponseSchemaError(
            f"response_schema fields {sorted(reserved)} are reserved (every tool call may "
            "carry them already): rename them"
        )
    defs = found.get("$defs", {})
    inlined = {name: _inline(value, defs, frozenset()) for name, value in properties.items()}
    return {"properties": inlined, "required": required}


def split_arguments(
    schema: ResponseSchema, arguments: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call's arguments for the tool's own action, and its structured output (validated;
    ResponseSchemaError with what is wrong)."""
    fields = set(schema_json(schema).get("properties", {}))
    own = {k: v for k, v in arguments.items() if k not in fields}
    given = {k: v for k, v in arguments.items() if k in fields}
    return own, output_json(schema, given)


def output_json(schema: ResponseSchema, data: dict[str, Any]) -> dict[str, Any]:
    """`data` validated against the schema, as JSON; ResponseSchemaError when it does not fit."""
    if isinstance(schema, type):
        from pydantic import ValidationError

        try:
            return schema.model_validate(data).model_dump(mode="json")
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(output)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ResponseSchemaError(f"response_schema validation failed: {problems}") from exc
    _validate_json(schema, data)
    return data


def parse_output(schema: ResponseSchema, data: dict[str, Any]) -> BaseModel | dict[str, Any]:
    """Structured output read back: a model instance for a model class, else the dict."""
    if isinstance(schema, type):
        return schema.model_validate(output_json(schema, data))
    _validate_json(schema, data)
    return data


def _check_json_schema(schema: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ResponseSchemaError(
            f"response_schema is not a valid JSON schema: {exc.message}"
        ) from exc


def _validate_json(schema: dict[str, Any], data: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

    try:
        Draft202012Validator(schema).validate(data)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "(output)"
        raise ResponseSchemaError(
            f"response_schema validation failed at {where}: {exc.message}"
        ) from exc


def _inline(node: Any, defs: dict[str, Any], seen: frozenset[str]) -> Any:
    """`node` with each `#/$defs/X` reference replaced by X itself; a reference back into a
    definition being written out becomes a plain object (recursive models)."""
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
        name = ref[8:]
        if name in seen:
            target = defs[name]
            shallow = {"type": target.get("type", "object")}
            if "description" in target:
                shallow["description"] = target["description"]
            return shallow
        written = _inline(defs[name], defs, seen | {name})
        siblings = {k: _inline(v, defs, seen) for k, v in node.items() if k != "$ref"}
        return {**written, **siblings}
    return {k: _inline(v, defs, seen) for k, v in node.items() if k != "$defs"}
