"""How skills reach the model: always-on ones in the system prompt, recalled ones in a message."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ohtui.sdk.context.skills.skill import Skill
from ohtui.sdk.llm.message import TextContent


def render_repo_context(skills: Iterable[Skill]) -> str | None:
    """The system-prompt block for always-on skills and the AgentSkills the model may open."""
    skills = list(skills)
    always = [s for s in skills if s.trigger is None and not s.is_agentskills_format]
    on_demand = [s for s in skills if s.is_agentskills_format]
    parts: list[str] = []
    if always:
        body = "\n\n".join(
            f'<skill name="{s.name}" source="{s.source or ""}">\n{s.content.strip()}\n</skill>'
            for s in always
        )
        parts.append(
            "<REPO_CONTEXT>\nInstructions for this project and user. Follow them unless "
            f"the user says otherwise.\n\n{body}\n</REPO_CONTEXT>"
        )
    if on_demand:
        rows = "\n".join(
            f"- {s.name}: {s.description or 'no description'} (read {s.source})" for s in on_demand
        )
        parts.append(
            "<AVAILABLE_SKILLS>\nSkills you can read when a task needs them:\n"
            f"{rows}\n</AVAILABLE_SKILLS>"
        )
    return "\n\n".join(parts) or None


def recall_knowledge(
    skills: Sequence[Skill], text: str, skip: Iterable[str] = ()
) -> tuple[TextContent | None, list[str]]:
    """The knowledge the keywords in `text` recall, and the names of the skills that fired.

    Skills named in `skip` (already recalled in this conversation) do not fire again.
    """
    skipped = set(skip)
    blocks: list[str] = []
    names: list[str] = []
    for skill in skills:
        if skill.name in skipped:
            continue
        keyword = skill.match_trigger(text)
        if keyword is None:
            continue
        names.append(skill.name)
        where = (
            f"\nSkill file: {skill.source} (relative paths in it start there)"
            if skill.source
            else ""
        )
        blocks.append(
            f'<EXTRA_INFO skill="{skill.name}">\nAdded because the message mentions '
            f'"{keyword}"; use it only if it helps with the request.{where}\n\n'
            f"{skill.content.strip()}\n</EXTRA_INFO>"
        )
    if not blocks:
        return None, []
    return TextContent(text="\n\n".join(blocks)), names
