"""/init: the message that asks the agent to write (or improve) the workspace's AGENTS.md.

It goes as an ordinary user message, so the user watches the agent read the project and
approves the write under the current confirmation policy, like any other edit.
"""

from __future__ import annotations

from pathlib import Path

INSTRUCTIONS_FILE = "AGENTS.md"
OTHER_INSTRUCTIONS = (
    "CLAUDE.md",
    "GEMINI.md",
    ".cursorrules",
    ".cursor/rules/",
    ".github/copilot-instructions.md",
)
"""Other agents' instruction files worth folding in, where the project has them."""

_WHAT = """\
AGENTS.md is read by coding agents (you included, in later conversations) before they work \
here. It should let a newcomer be productive at once, and hold only what is true of this \
repository.

First look around: the README, the build and package files (pyproject.toml, package.json, \
Makefile, Cargo.toml, go.mod...), the CI configuration, linter and formatter settings, the \
layout of the source and test folders, a few representative modules and tests, and recent \
commit messages (`git log --oneline -20`). Also read {others} where they exist, and keep what \
matters in them.

Then write it in Markdown, concise (well under a page, a short section each), covering what \
applies:
- Build, test and run: the exact commands, including how to run a single test, and the lint, \
format and type checks expected before a commit.
- Layout: where the code, the tests and the configuration live, and the architecture that \
takes reading several files to see (not a list of every file).
- Conventions: style and naming rules, patterns the code follows, how commits and pull \
requests are written here.
- Pitfalls: anything surprising an agent must know (generated files, environment variables, \
slow or flaky tests, things never to touch).

Rules: do not invent. Every command and rule must come from a file you read or a command you \
ran; leave out a section you have nothing real for. No generic advice ("write tests", "handle \
errors", "keep secrets out of commits"). Do not run anything that changes the project other \
than writing {file}."""

_NEW = (
    """\
Please create {file} at the root of this workspace: a guide for AI coding agents working in \
this repository.

"""
    + _WHAT
)

_IMPROVE = (
    """\
This workspace already has an {file}. Please improve it rather than replace it: read it \
first, keep what is still right, correct what is out of date, and add what is missing. Edit \
it in place; do not start the file over.

"""
    + _WHAT
)


_EITHER = (
    """\
Please create {file} at the root of this workspace: a guide for AI coding agents working in \
this repository. If it exists already, improve it rather than replace it: read it first, keep \
what is still right, correct what is out of date, add what is missing, and edit it in place.

"""
    + _WHAT
)


def init_prompt(existing: bool | None, extra: str = "") -> str:
    """The /init message. `existing`: the workspace has an AGENTS.md to improve (None: not
    known here, the workspace is on an agent server); `extra`: what the user added."""
    template = _EITHER if existing is None else _IMPROVE if existing else _NEW
    text = template.format(file=INSTRUCTIONS_FILE, others=", ".join(OTHER_INSTRUCTIONS))
    extra = extra.strip()
    return f"{text}\n\nAlso: {extra}" if extra else text


def has_instructions(workspace: Path) -> bool:
    """Whether `workspace` has an AGENTS.md (any case, as the skills loader reads it)."""
    try:
        return any(
            entry.name.lower() == INSTRUCTIONS_FILE.lower() and entry.is_file()
            for entry in workspace.iterdir()
        )
    except OSError:
        return False
