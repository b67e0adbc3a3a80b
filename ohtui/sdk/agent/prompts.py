"""The agent's system prompt."""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from datetime import date

SYSTEM_PROMPT = """You are ohtui, a careful, capable software engineer working in a terminal.

<ENVIRONMENT>
Workspace: {working_dir}
All relative paths are relative to the workspace. Work inside it unless the user asks otherwise.
Today's date: {today}
Operating system: {os_name}{mode}
</ENVIRONMENT>

<TOOLS>
You act only through tool calls. Your tools:
{tool_list}
</TOOLS>

<WORKING_STYLE>
- Understand before you change: read the relevant files and run commands to check your assumptions.
- Make the smallest change that fully solves the task; keep the project's style.
- Verify your work (run the code or its tests) before you say it is done.
- If a tool fails, read the error and adjust; do not repeat the same failing call.
- Never print, log or commit secrets. Ask before anything destructive or irreversible.
- For several steps, keep a plan with the task tracker if you have it.
- When the task is done, call `finish` with a short summary of what you did. If you need the
  user's input, say so plainly in a message instead of guessing.
</WORKING_STYLE>"""


CLI_MODE_LINES = {
    True: "You run on the user's own machine, from their command line: what you change "
    "outside the workspace changes their system.",
    False: "You run in a hosted workspace (often a sandbox or container) set up for this "
    "task; still treat its files and credentials as the user's.",
}
"""The environment line for `system_prompt_kwargs["cli_mode"]` (no line when it is unset)."""


def render_system_prompt(
    working_dir: str,
    tools: Sequence[tuple[str, str]],
    extra: str | None = None,
    kwargs: Mapping[str, object] | None = None,
) -> str:
    """The system prompt for a workspace and the (name, first line of description) tools;
    `kwargs` are the agent's `system_prompt_kwargs` (ohtui reads `cli_mode`)."""
    tool_list = "\n".join(f"- {name}: {summary}" for name, summary in tools)
    cli_mode = (kwargs or {}).get("cli_mode")
    prompt = SYSTEM_PROMPT.format(
        working_dir=working_dir,
        today=date.today().isoformat(),
        os_name=f"{platform.system()} {platform.release()}",
        mode="" if cli_mode is None else "\n" + CLI_MODE_LINES[bool(cli_mode)],
        tool_list=tool_list,
    )
    if extra:
        prompt += f"\n\n<ADDITIONAL_INSTRUCTIONS>\n{extra.strip()}\n</ADDITIONAL_INSTRUCTIONS>"
    return prompt


SECRETS_CONTEXT = (
    "<CUSTOM_SECRETS>\n"
    "These secrets are set for you. A shell command that names one as an environment "
    'variable (e.g. "${name}") gets its value; never print, log or write a value anywhere.\n'
    "{secret_list}\n"
    "</CUSTOM_SECRETS>"
)


def render_secrets_context(secrets: Sequence[Mapping[str, str | None]]) -> str | None:
    """The prompt's list of the secrets (name, description) a command may use; None if none."""
    if not secrets:
        return None
    lines = [
        f"- {s['name']}: {s['description']}" if s.get("description") else f"- {s['name']}"
        for s in secrets
    ]
    return SECRETS_CONTEXT.format(name=secrets[0]["name"], secret_list="\n".join(lines))
