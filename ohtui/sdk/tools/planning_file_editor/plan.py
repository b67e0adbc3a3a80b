"""The plan a planning agent writes: its sections, and where the file lives."""

from __future__ import annotations

DEFAULT_CONFIG_DIR = ".agents_tmp"
"""The workspace folder the plan is kept in, apart from the user's files."""
PLAN_FILENAME = "PLAN.md"

PLAN_STRUCTURE: list[tuple[str, str]] = [
    (
        "OBJECTIVE",
        "* The goal of the plan in one or two sentences.\n"
        "* The problem restated in operational terms.",
    ),
    (
        "CONTEXT SUMMARY",
        "* The components, files or data the work touches.\n"
        "* Dependencies and constraints (technical, organisational, external).",
    ),
    (
        "APPROACH OVERVIEW",
        "* The chosen approach, at a high level.\n"
        "* Why it was chosen, in a line, if there were alternatives.",
    ),
    (
        "IMPLEMENTATION STEPS",
        "* The steps, in order. For each:\n"
        "  - its **goal** (what it achieves),\n"
        "  - its **method** (how, briefly),\n"
        "  - and, where it helps, a **reference** (the file, module or function it changes).",
    ),
    (
        "TESTING AND VALIDATION",
        "* How to check the result.\n"
        "* What success looks like: the outputs, behaviour or conditions expected.",
    ),
]
"""The plan's sections, in order: (title, what goes in it)."""


def format_plan_structure() -> str:
    """The sections, numbered with what goes in each, for the planning agent's prompt."""
    if not PLAN_STRUCTURE:
        return ""
    sections = [
        f"{number}. {title}\n   " + "\n   ".join(description.split("\n"))
        for number, (title, description) in enumerate(PLAN_STRUCTURE, 1)
    ]
    return "The plan must follow this structure exactly:\n\n" + "\n\n".join(sections)


def get_plan_headers() -> str:
    """The plan file's first content: one Markdown heading per section."""
    return "\n".join(
        f"# {number}. {title}\n" for number, (title, _) in enumerate(PLAN_STRUCTURE, 1)
    )
