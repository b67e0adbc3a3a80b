"""Knowledge skills: reading skill files, finding them in a project and the user's dirs, and
what a conversation sends the model when a message names a trigger (scripted LLM server)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import LLM, Agent, LocalConversation, MessageEvent
from ohtui.sdk.context import AgentContext
from ohtui.sdk.context.skills import (
    KeywordTrigger,
    Skill,
    SkillError,
    load_project_skills,
    load_user_skills,
    read_skills_dir,
)

DEPLOY = """---
name: deploy
triggers:
  - deploy
  - /ship
---
Deploy with `make release`; never push to prod on Fridays.
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- one file ------------------------------------------------------------------------------


def test_a_skill_file_with_triggers_is_a_knowledge_skill(tmp_path: Path) -> None:
    skill = Skill.load(write(tmp_path / "skills" / "deploy.md", DEPLOY), tmp_path / "skills")
    assert skill.name == "deploy"
    assert skill.trigger is not None and skill.trigger.keywords == ["deploy", "/ship"]
    assert skill.content == "Deploy with `make release`; never push to prod on Fridays.\n"
    assert skill.source == str(tmp_path / "skills" / "deploy.md")


def test_without_a_name_a_skill_is_named_by_its_path_and_without_triggers_always_on(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "skills" / "web" / "style.md", "Use tabs.\n")
    skill = Skill.load(path, tmp_path / "skills")
    assert skill.name == "web/style"
    assert skill.trigger is None
    assert skill.content == "Use tabs.\n"


def test_an_agentskills_skill_md_is_named_by_its_folder(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pdf-tools" / "SKILL.md", "---\ndescription: Read PDFs\n---\nUse pdftotext.\n"
    )
    skill = Skill.load(path)
    assert (skill.name, skill.description, skill.is_agentskills_format) == (
        "pdf-tools",
        "Read PDFs",
        True,
    )


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("Please DEPLOY it", True),
        ("deploy.", True),
        ("redeployment", False),
        ("deployer", False),
        ("run /ship now", True),
        ("shipping", False),
    ],
)
def test_keywords_match_whole_words_whatever_the_case(
    tmp_path: Path, message: str, fires: bool
) -> None:
    skill = Skill.load(write(tmp_path / "deploy.md", DEPLOY))
    assert (skill.match_trigger(message) is not None) is fires


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("---\nname: a\nname: b: c\n---\nbody\n", "line 3: the frontmatter is not valid YAML"),
        ("---\ntriggers: deploy\n---\nbody\n", "'triggers' must be a list"),
        ("---\ntriggers:\n  - ''\n---\nbody\n", "every trigger must be a non-empty keyword"),
        ("---\nname: x\nbody without an end\n", "is never closed"),
        ("---\n- a\n- b\n---\nbody\n", "must be 'key: value' lines, not a list"),
        ("---\nname: [1, 2]\n---\nbody\n", "'name' must be a non-empty text"),
        ("---\npaths: ['src/**']\n---\nbody\n", "path-scoped skills ('paths:') are not"),
    ],
)
def test_a_malformed_skill_file_is_a_skill_error_naming_the_file(
    tmp_path: Path, text: str, fault: str
) -> None:
    path = write(tmp_path / "bad.md", text)
    with pytest.raises(SkillError) as raised:
        Skill.load(path)
    assert str(path) in str(raised.value)
    assert fault in str(raised.value)


def test_a_file_that_is_not_utf8_is_a_skill_error(tmp_path: Path) -> None:
    path = write(tmp_path / "latin.md", b"caf\xe9\n")
    with pytest.raises(SkillError, match=r"latin\.md: not UTF-8 text"):
        Skill.load(path)


# --- directories ---------------------------------------------------------------------------


def test_a_bad_file_is_skipped_with_a_warning_and_the_others_load(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write(skills / "deploy.md", DEPLOY)
    write(skills / "broken.md", "---\ntriggers: [oops\n---\n")
    write(skills / "README.md", "# About these skills\n")
    write(skills / "pdf" / "SKILL.md", "Use pdftotext.\n")
    write(skills / "pdf" / "reference.md", "not a skill of its own\n")

    loaded = read_skills_dir(skills)

    assert sorted(loaded.skills) == ["deploy", "pdf"]
    [warning] = loaded.warnings
    assert str(skills / "broken.md") in warning
    assert "not valid YAML" in warning


def test_a_project_has_agents_md_always_on_and_its_skill_dirs(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / "AGENTS.md", "Run `make check` before committing.\n")
    write(project / ".agents" / "skills" / "deploy.md", DEPLOY)
    write(project / ".openhands" / "skills" / "db.md", "---\ntriggers: [postgres]\n---\nPG 16")
    write(project / ".ohtui" / "skills" / "deploy.md", "---\ntriggers: [deploy]\n---\nOurs.\n")

    loaded = load_project_skills(project)

    assert list(loaded.skills) == ["agents", "deploy", "db"]
    assert loaded.skills["agents"].trigger is None
    assert loaded.skills["deploy"].content == "Ours.\n"  # .ohtui/skills is looked at first
    assert loaded.warnings == []


def test_a_subfolder_of_a_git_repository_also_gets_the_repository_root_skills(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "AGENTS.md", "Root rules.\n")
    write(repo / ".agents" / "skills" / "deploy.md", DEPLOY)
    write(repo / "service" / ".agents" / "skills" / "deploy.md", "---\ntriggers: [deploy]\n---\nX")

    loaded = load_project_skills(repo / "service")

    assert loaded.skills["agents"].content == "Root rules.\n"
    assert loaded.skills["deploy"].content == "X"  # the working folder wins over the root


def test_user_skills_come_from_the_dirs_given_the_first_winning(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write(first / "deploy.md", "---\ntriggers: [deploy]\n---\nfirst")
    write(second / "deploy.md", "---\ntriggers: [deploy]\n---\nsecond")
    write(second / "db.md", "---\ntriggers: [postgres]\n---\ndb")

    loaded = load_user_skills([first, second, tmp_path / "missing"])

    assert {n: s.content for n, s in loaded.skills.items()} == {"deploy": "first", "db": "db"}


# --- in a conversation ---------------------------------------------------------------------


@pytest.fixture
def open_conversation(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> Iterator[Callable[..., LocalConversation]]:
    made: list[LocalConversation] = []

    def make(context: AgentContext, **kwargs: Any) -> LocalConversation:
        conv = LocalConversation(
            agent=Agent(llm=llm, agent_context=context),
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def user_events(conv: LocalConversation) -> list[MessageEvent]:
    return [e for e in conv.state.events if isinstance(e, MessageEvent) and e.source == "user"]


def test_a_trigger_adds_the_skill_to_what_the_model_gets_and_records_it(
    open_conversation, llm_server, workspace: Path, tmp_path: Path
) -> None:
    user_dir = tmp_path / "config" / "skills"
    write(user_dir / "deploy.md", "---\ntriggers: [deploy]\n---\nUSER deploy notes")
    write(user_dir / "tea.md", "---\ntriggers: [tea]\n---\nBrew green tea at 80 C.")
    write(workspace / "AGENTS.md", "Always answer in haiku.\n")
    write(workspace / ".agents" / "skills" / "deploy.md", DEPLOY)
    context = AgentContext(
        load_project_skills=True, load_user_skills=True, user_skills_dirs=[str(user_dir)]
    )
    llm_server.reply_text("Done.")
    llm_server.reply_text("Again.")
    conv = open_conversation(context)

    conv.send_message("Please deploy the site")
    conv.run()
    conv.send_message("deploy once more, and make tea")
    conv.run()

    first, second = user_events(conv)
    assert first.llm_message.text == "Please deploy the site"  # what the user wrote, as is
    assert first.activated_skills == ["deploy"]
    [knowledge] = first.extended_content
    assert "make release" in knowledge.text  # the project's deploy skill beats the user's
    assert "USER deploy notes" not in knowledge.text
    assert second.activated_skills == ["tea"]  # deploy was recalled already: not again
    assert conv.state.activated_knowledge_skills == ["deploy", "tea"]

    system, sent = llm_server.requests[0]["messages"][:2]
    assert "Always answer in haiku." in system["content"]  # AGENTS.md is always on
    assert "Brew green tea" not in system["content"]  # knowledge skills wait for a trigger
    assert sent["content"].startswith("Please deploy the site")
    assert "never push to prod on Fridays" in sent["content"]
    later = llm_server.requests[1]["messages"][3]
    assert "Brew green tea at 80 C." in later["content"]
    assert "make release" not in later["content"]


def test_recalled_skills_survive_a_resume(open_conversation, llm_server, workspace: Path) -> None:
    write(workspace / ".agents" / "skills" / "deploy.md", DEPLOY)
    context = AgentContext(load_project_skills=True)
    llm_server.reply_text("ok")
    conv = open_conversation(context)
    conv.send_message("deploy")
    conv.run()
    conv_id = conv.id
    conv.close()

    resumed = open_conversation(context, conversation_id=conv_id)
    resumed.send_message("deploy again")

    assert resumed.state.activated_knowledge_skills == ["deploy"]
    assert user_events(resumed)[-1].activated_skills == []


def test_malformed_skill_files_are_warnings_on_the_conversation_not_a_crash(
    open_conversation, llm_server, workspace: Path
) -> None:
    bad = write(workspace / ".agents" / "skills" / "bad.md", "---\ntriggers: oops\n---\nx\n")
    write(workspace / ".agents" / "skills" / "deploy.md", DEPLOY)
    llm_server.reply_text("ok")

    conv = open_conversation(AgentContext(load_project_skills=True))
    conv.send_message("deploy")
    conv.run()

    [warning] = conv.skill_warnings
    assert str(bad) in warning and "'triggers' must be a list" in warning
    assert user_events(conv)[0].activated_skills == ["deploy"]


def test_without_skill_loading_the_workspace_files_are_not_read(
    open_conversation, llm_server, workspace: Path
) -> None:
    write(workspace / "AGENTS.md", "Always answer in haiku.\n")
    llm_server.reply_text("ok")
    conv = open_conversation(AgentContext())
    conv.send_message("hello")
    conv.run()
    assert "haiku" not in llm_server.requests[0]["messages"][0]["content"]


def test_the_system_prompt_has_always_on_skills_whole_and_agentskills_by_name() -> None:
    context = AgentContext(
        skills=[
            Skill(name="agents", content="Run make check.\n", source="/p/AGENTS.md"),
            Skill(
                name="pdf",
                content="Long PDF instructions",
                description="Read PDFs",
                source="/p/.agents/skills/pdf/SKILL.md",
                is_agentskills_format=True,
            ),
            Skill(name="deploy", content="recalled only", trigger=KeywordTrigger(keywords=["d"])),
        ],
        system_message_suffix="Answer in French.",
    )
    extension = context.system_message_extension()
    assert extension is not None
    assert '<skill name="agents" source="/p/AGENTS.md">\nRun make check.\n</skill>' in extension
    assert "- pdf: Read PDFs (read /p/.agents/skills/pdf/SKILL.md)" in extension
    assert "Long PDF instructions" not in extension
    assert "recalled only" not in extension
    assert extension.endswith("Answer in French.")


def test_a_project_file_linked_outside_the_project_is_not_read(tmp_path: Path) -> None:
    """A hostile repository's AGENTS.md (or skill) linked to the user's keys would put them
    in the system prompt of every conversation opened there. Links inside the project, and
    the user's own skills folder, still work."""
    key = tmp_path / "home" / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN KEY-----\nsecret-key-bytes\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    skills = project / ".agents" / "skills"
    skills.mkdir(parents=True)
    (project / "AGENTS.md").symlink_to(key)
    (project / "CLAUDE.md").symlink_to(tmp_path / "home" / ".ssh")  # a folder: no file
    (skills / "keys.md").symlink_to(key)
    (skills / "loop.md").symlink_to(skills / "loop2.md")
    (skills / "loop2.md").symlink_to(skills / "loop.md")
    (project / "docs").mkdir()
    (project / "docs" / "style.md").write_text("Use tabs.")
    (skills / "style.md").symlink_to(project / "docs" / "style.md")  # inside: read

    load = load_project_skills(project)
    assert list(load.skills) == ["style"]
    assert all("secret" not in skill.content for skill in load.skills.values())
    refused = [warning for warning in load.warnings if "links outside the project" in warning]
    assert len(refused) == 2 and all("secret" not in warning for warning in refused)

    mine = tmp_path / "my-skills"
    mine.mkdir()
    (mine / "mine.md").symlink_to(project / "docs" / "style.md")
    assert list(load_user_skills([mine]).skills) == ["mine"]
