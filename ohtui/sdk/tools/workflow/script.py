"""Checking and running a workflow script: Python the model wrote, run in this process.

The script only coordinates sub-agents through `wf`; the sub-agents do the work, under
the conversation's policy and sandbox. Since the script itself runs unconfined, what it
may say is an allowlist, checked on its syntax tree before it runs: no imports, no name or
attribute starting with "_", attributes only from `ALLOWED_ATTRIBUTES` (wf's methods and
plain str/list/dict/set methods: none of them reaches a frame, a class or a module), no
`str.format` (it walks attributes inside its braces), and a handful of builtins.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from typing import Any, Final

MAX_SCRIPT_CHARS: Final[int] = 20_000
TIMEOUT_SECONDS: Final[float] = 3600.0

WF_METHODS: Final[frozenset[str]] = frozenset(
    {"run_agent", "map_agents", "reduce_agent", "pipeline", "flatten"}
)
"""What a script may call on `wf`."""

ALLOWED_ATTRIBUTES: Final[frozenset[str]] = WF_METHODS | frozenset(
    {
        # str
        "capitalize", "count", "endswith", "find", "join", "lower", "lstrip", "replace",
        "rstrip", "split", "splitlines", "startswith", "strip", "title", "upper",
        # list, dict, set
        "add", "append", "clear", "copy", "discard", "extend", "get", "index", "insert",
        "items", "keys", "pop", "remove", "setdefault", "sort", "update", "values",
    }
)  # fmt: skip
"""Every attribute a script may read: nothing else is reachable from it."""

_BUILTINS: Final[dict[str, Any]] = {
    f.__name__: f
    for f in (
        abs, all, any, bool, dict, enumerate, filter, float, int, isinstance, len, list,
        map, max, min, print, range, repr, reversed, round, set, sorted, str, sum, tuple,
        zip, Exception, IndexError, KeyError, RuntimeError, TypeError, ValueError,
    )
}  # fmt: skip
"""The builtins a script sees (no type, getattr, open, eval, import, ...)."""


class WorkflowScriptError(ValueError):
    """A workflow script that cannot run: what is wrong, and where."""


def _where(node: ast.AST) -> str:
    line = getattr(node, "lineno", None)
    return f" (line {line})" if line is not None else ""


def validate_workflow_script(script: str) -> None:
    """Refuse a script that is too long, does not parse, lacks `async def main(wf):`, or
    says anything outside the allowlist (see the module); WorkflowScriptError says what."""
    if len(script) > MAX_SCRIPT_CHARS:
        raise WorkflowScriptError(
            f"Workflow script is too large: {len(script)} > {MAX_SCRIPT_CHARS} characters"
        )
    try:
        tree = ast.parse(script)
    except SyntaxError as exc:
        raise WorkflowScriptError(f"Workflow script has invalid syntax: {exc}") from exc
    mains = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "main"]
    if len(mains) != 1:
        raise WorkflowScriptError("Workflow script must define exactly one `async def main(wf):`")
    args = mains[0].args
    if (
        [a.arg for a in args.args] != ["wf"]
        or args.posonlyargs
        or args.kwonlyargs
        or args.vararg
        or args.kwarg
        or args.defaults
    ):
        raise WorkflowScriptError("Workflow entry point must be `async def main(wf):`")
    for node in ast.walk(tree):
        _check_node(node)


def _check_node(node: ast.AST) -> None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        raise WorkflowScriptError(f"Workflow scripts may not import modules{_where(node)}")
    if isinstance(node, ast.Global | ast.Nonlocal):
        raise WorkflowScriptError(f"Workflow scripts may not use global names{_where(node)}")
    if isinstance(node, ast.Name) and node.id.startswith("_"):
        raise WorkflowScriptError(
            f"Workflow scripts may not use names starting with '_' ({node.id}){_where(node)}"
        )
    if isinstance(node, ast.Attribute) and node.attr not in ALLOWED_ATTRIBUTES:
        raise WorkflowScriptError(
            f"Workflow scripts may not use the attribute '{node.attr}'{_where(node)}; "
            f"wf offers {', '.join(sorted(WF_METHODS))}"
        )


def execute_workflow_script(script: str, context: Any) -> Any:
    """Check the script, then run its `main(context)` to the end (within an hour) and return
    what it returns. Call it from a thread without a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise WorkflowScriptError("Workflow scripts must be run from a synchronous context")
    validate_workflow_script(script)
    namespace: dict[str, Any] = {}
    # The checked script runs with only the allowed builtins (exec is the point here).
    exec(compile(script, "<workflow>", "exec"), {"__builtins__": dict(_BUILTINS)}, namespace)
    main = namespace.get("main")
    if not inspect.iscoroutinefunction(main):
        raise WorkflowScriptError("Workflow entry point must be `async def main(wf):`")

    async def bounded() -> Any:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            return await main(context)

    try:
        return asyncio.run(bounded())
    except TimeoutError:
        raise WorkflowScriptError(
            f"Workflow timed out after {TIMEOUT_SECONDS:.0f} seconds"
        ) from None
