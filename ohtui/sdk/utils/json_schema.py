"""Checking data against a JSON schema given at run time (an MCP tool's, a client tool's).

jsonschema is imported on the first check, not with the SDK.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any


def schema_problems(schema: dict[str, Any], data: dict[str, Any]) -> list[str]:
    """What is wrong with `data` for a JSON schema, one line each (at most five)."""
    if not schema:
        return []
    validator = _validator(json.dumps(schema, sort_keys=True))
    if validator is None:
        return []
    problems: list[str] = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.path))[:5]:
        where = ".".join(str(p) for p in error.path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    return problems


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    """A validator for a schema (cached: each call of a tool checks against the same one);
    None when the schema is itself invalid (whoever runs the tool then judges the call)."""
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError

    schema = json.loads(schema_json)
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None
    return cls(schema)
