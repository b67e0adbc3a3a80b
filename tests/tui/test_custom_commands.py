"""Custom slash commands from `.ohtui/commands/*.md` and the user's config folder: read from
real files, offered after `/`, in /help and the palette, and sent as the user's message."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    chat_ready,
    screen_text,
    status,
    submit,
    type_text,
    user_message_texts,
)
from llm_server import ScriptedLLMServer
from textual.command import CommandPalette
from textual.widgets import Static

from ohtui.tui import app as app_module
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.custom_commands import (
    MAX_BYTES,
    command_folders,
    load_commands,
)
from ohtui.tui.screens.help import HelpScreen
from ohtui.tui.widgets.composer import Composer

REVIEW = """\
---
description: Review a file for bugs
argument-hint: [file]
---
Review $ARGUMENTS for bugs. Start with $1.
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class NotingApp(OhtuiApp):
    """The real app, keeping the text of every notification."""

    CSS_PATH = str(Path(app_module.__file__).parent / "ohtui.tcss")  # not relative to this file

    def __init__(self, options: AppOptions) -> None:
        super().__init__(options)
        self.notes: list[str] = []

    def notify(self, message: str, **kwargs: Any) -> None:
        self.notes.append(message)
        super().notify(message, **kwargs)


@pytest.fixture
def user_commands(tmp_path: Path) -> Path:
    return tmp_path / "config" / "commands"


@pytest.fixture
def options(app_options: AppOptions, user_commands: Path) -> AppOptions:
    return replace(app_options, commands_dir=user_commands)


def workspace_commands(options: AppOptions) -> Path:
    return options.workspace / ".ohtui" / "commands"


# --- reading the files ----------------------------------------------------------------------


def test_a_file_becomes_a_command_with_its_frontmatter(tmp_path: Path) -> None:
    folder = tmp_path / ".ohtui" / "commands"
    write(folder, "review.md", REVIEW)
    write(folder, "git/pr.md", "Open a pull request for this branch.\n")
    load = load_commands(command_folders(tmp_path, None))
    assert load.problems == []
    by_name = {c.name: c for c in load.commands}
    review = by_name["review"]
    assert (review.description, review.argument_hint, review.takes_argument) == (
        "Review a file for bugs",
        "[file]",
        True,
    )
    assert review.expand("src/app.py  tests/x.py") == (
        "Review src/app.py  tests/x.py for bugs. Start with src/app.py."
    )
    pr = by_name["git:pr"]  # a subfolder is a namespace, as in Claude Code
    assert pr.description == "Open a pull request for this branch."  # its first line
    assert not pr.takes_argument
    assert pr.expand("quickly") == "Open a pull request for this branch.\n\nquickly"


def test_argument_hint_with_an_underscore_and_quoted_words(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    write(folder, "fix.md", "---\nargument_hint: '<issue> <owner>'\n---\nFix #$1 for $2.\n")
    (command,) = load_commands([(folder, "user")]).commands
    assert command.argument_hint == "<issue> <owner>"
    assert command.expand('12 "Ann Lee"') == "Fix #12 for Ann Lee."
    assert command.expand("12") == "Fix #12 for ."


def test_claude_code_hints_that_are_not_yaml_still_load(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    text = "---\nargument-hint: [pr-number] [priority]\ndescription: Triage a PR\n---\nGo $1.\n"
    write(folder, "triage.md", text)
    load = load_commands([(folder, "user")])
    assert load.problems == []
    (command,) = load.commands
    assert (command.argument_hint, command.description) == ("[pr-number] [priority]", "Triage a PR")


def test_bad_files_are_named_with_their_fault_and_the_rest_load(tmp_path: Path) -> None:
    folder = tmp_path / "cmds"
    write(folder, "good.md", "Say hello.\n")
    write(folder, "unclosed.md", "---\ndescription: x\nSay hello.\n")
    write(folder, "badyaml.md", "---\ndescription: [unclosed\n  - x: {\n---\nbody\n")
    write(folder, "empty.md", "---\ndescription: nothing below\n---\n\n")
    write(folder, "huge.md", "x" * (MAX_BYTES + 1))
    write(folder, "has space.md", "Hello.\n")
    (folder / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    load = load_commands([(folder, "user")])
    assert [c.name for c in load.commands] == ["good"]
    problems = "\n".join(load.problems)
    assert len(load.problems) == 6
    assert "unclosed.md: the frontmatter opened by '---' on line 1 is never closed" in problems
    assert "badyaml.md line 3: the frontmatter is not valid YAML" in problems
    assert "empty.md: it has no prompt" in problems
    assert "huge.md: it is 64 KB; a command file may be at most 64 KB" in problems
    assert "'has space' cannot be part of a command name" in problems
    assert "binary.md: not UTF-8 text" in problems


def test_a_workspace_command_wins_over_a_user_one_of_its_name(tmp_path: Path) -> None:
    write(tmp_path / "ws" / ".ohtui" / "commands", "deploy.md", "Deploy from the workspace.\n")
    write(tmp_path / "user", "deploy.md", "Deploy as the user.\n")
    write(tmp_path / "user", "mine.md", "Mine.\n")
    load = load_commands(command_folders(tmp_path / "ws", tmp_path / "user"))
    assert [(c.name, c.scope, c.prompt) for c in load.commands] == [
        ("deploy", "workspace", "Deploy from the workspace."),
        ("mine", "user", "Mine."),
    ]


# --- in the app -------------------------------------------------------------------------------


def menu_text(app: OhtuiApp) -> str:
    assert app.chat is not None
    composer = app.chat.query_one(Composer)
    return "\n".join(str(option.prompt) for option in composer._menu.options)


@pytest.mark.anyio
async def test_custom_commands_are_offered_after_slash_and_sent_as_the_message(
    options: AppOptions, user_commands: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    write(workspace_commands(options), "review.md", REVIEW)
    write(user_commands, "standup.md", "---\ndescription: Summarize my day\n---\nSummarize.\n")
    llm_server.reply_text("Reviewed.", usage=USAGE)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.chat is not None
        await wait(pilot, lambda: app.chat.custom_commands.find("review") is not None)
        await type_text(pilot, "/")
        shown = menu_text(app)
        assert "/review [file]  Review a file for bugs" in shown
        assert "/standup  Summarize my day" in shown
        assert shown.index("/help") < shown.index("/review")  # after the built-ins
        await type_text(pilot, "rev")
        await pilot.press("enter")  # takes an argument: the menu leaves "/review "
        assert app.chat.query_one(Composer).text == "/review "
        await type_text(pilot, "app.py")
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the answer")
    assert user_message_texts(llm_server.requests[0])[-1].startswith(
        "Review app.py for bugs. Start with app.py."
    )


@pytest.mark.anyio
async def test_a_custom_command_never_shadows_a_built_in_and_says_so_once(
    options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    write(workspace_commands(options), "help.md", "Not the help.\n")
    write(workspace_commands(options), "broken.md", "---\ndescription: x\n")
    write(workspace_commands(options), "fine.md", "Fine.\n")
    app = NotingApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.chat is not None
        await wait(pilot, lambda: app.chat.custom_commands.find("fine") is not None)
        notes = [n for n in app.notes if n.startswith("Custom command skipped")]
        assert len(notes) == 2
        assert any(".ohtui/commands/help.md: /help is a built-in command" in n for n in notes)
        assert any(".ohtui/commands/broken.md: the frontmatter" in n for n in notes)
        await submit(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the built-in help")
        await pilot.press("escape")
        # Opening the menu reads the files again: the same problems are not told again.
        write(workspace_commands(options), "later.md", "Added later.\n")
        await type_text(pilot, "/")
        await wait(pilot, lambda: app.chat.custom_commands.find("later") is not None)
        assert "/later" in menu_text(app)
        assert len([n for n in app.notes if n.startswith("Custom command skipped")]) == 2
    assert llm_server.requests == []


@pytest.mark.anyio
async def test_help_and_the_palette_list_the_custom_commands(
    options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    write(workspace_commands(options), "review.md", REVIEW)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.chat is not None
        await wait(pilot, lambda: app.chat.custom_commands.find("review") is not None)
        await submit(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        lines = [str(w.render()) for w in app.screen.query(Static)]
        at = lines.index("Custom commands")  # below the built-ins (scrolled to)
        assert lines[at + 1 : at + 3] == ["/review [file]", "Review a file for bugs"]
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await wait(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await type_text(pilot, "/revi")
        await wait(pilot, lambda: "Review a file for bugs" in screen_text(app), what="the hit")
        await pilot.press("enter")
        await wait(pilot, lambda: not isinstance(app.screen, CommandPalette), what="closing")
        assert app.chat.query_one(Composer).text == "/review "


def test_the_slash_menu_with_custom_commands(
    options: AppOptions, user_commands: Path, snap_compare: Any
) -> None:
    write(workspace_commands(options), "review.md", REVIEW)
    write(user_commands, "standup.md", "---\ndescription: Summarize my day\n---\nSummarize.\n")
    write(user_commands, "git/pr.md", "---\ndescription: Open a pull request\n---\nOpen it.\n")

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        while not chat_ready(app) or app.chat.custom_commands.find("git:pr") is None:
            await pilot.pause(0.05)
        await type_text(pilot, "/r")  # the built-ins starting with r, then the custom ones
        while "/git:pr" not in menu_text(app):
            await pilot.pause(0.05)
        await settle(pilot)

    assert snap_compare(OhtuiApp(options), terminal_size=(100, 30), run_before=run_before)


def test_the_first_frame_reads_no_command_file_and_imports_no_loader() -> None:
    # The commands are read on a thread once the first frame is up (see ChatScreen._start).
    code = (
        "import sys, ohtui.tui.app\n"
        "print(sorted(m for m in sys.modules if m in ('ohtui.tui.screens.custom_slash', "
        "'ohtui.tui.screens.custom_commands', 'yaml', 'ohtui.tui.widgets.instructions')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def settle(pilot: Any) -> None:
    """No notifications (they expire on timers) and no blinking cursor (its phase depends on
    timing) in a snapshot."""
    app = pilot.app
    app.clear_notifications()
    for widget in app.screen.query("TextArea, Input"):
        widget.cursor_blink = False
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()


def test_special_files_among_the_commands_never_block_and_the_good_ones_load(
    tmp_path: Path,
) -> None:
    """Tries written after the loader: a FIFO, a folder and a link to /dev/zero named like
    commands, and a link that loops back up."""
    import os

    from ohtui.tui.screens.custom_commands import command_folders, load_commands

    folder = tmp_path / ".ohtui" / "commands"
    (folder / "sub").mkdir(parents=True)
    os.mkfifo(folder / "pipe.md")  # read naively, this would wait forever
    (folder / "dir.md").mkdir()
    (folder / "zero.md").symlink_to("/dev/zero")
    (folder / "sub" / "loop").symlink_to(tmp_path)
    (folder / "good.md").write_text("---\ndescription: fine\n---\nDo $ARGUMENTS")
    load = load_commands(command_folders(tmp_path, None))
    names = [command.name for command in load.commands]
    assert "good" in names
    assert not {"pipe", "dir", "zero"} & set(names)


def test_a_project_command_linked_outside_the_project_is_refused_and_shows_nothing_of_it(
    tmp_path: Path,
) -> None:
    """A hostile repository links `/review` to the user's keys: typing it would send them to
    the model. A project's command must be a file of the project; the user's own folder may
    link where its owner likes."""
    from ohtui.tui.screens.custom_commands import command_folders, load_commands

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN KEY-----\nsecret-key-bytes\n")
    project = tmp_path / "project"
    folder = project / ".ohtui" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").symlink_to(home / ".ssh" / "id_ed25519")
    (project / "docs").mkdir()
    (project / "docs" / "shared.md").write_text("Summarize $ARGUMENTS")
    (folder / "shared.md").symlink_to(project / "docs" / "shared.md")  # inside: fine
    user = tmp_path / "user-commands"
    user.mkdir()
    (user / "mine.md").symlink_to(home / ".ssh" / "id_ed25519")  # the user's own choice

    load = load_commands(command_folders(project, user))
    names = {command.name for command in load.commands}
    assert "review" not in names and {"shared", "mine"} <= names
    [problem] = load.problems
    assert "review.md" in problem and "outside the workspace" in problem
    assert "secret" not in problem and "BEGIN" not in problem


def test_more_special_files_among_the_commands(tmp_path: Path) -> None:
    """More tries of the same classes, written after the loader: a socket, a dangling link,
    a link to /dev/urandom, a sparse file of a gigabyte, bytes that are not UTF-8, a name
    with an escape sequence; each is left out with a problem, the rest load."""
    import socket

    from ohtui.tui.screens.custom_commands import command_folders, load_commands

    folder = tmp_path / ".ohtui" / "commands"
    folder.mkdir(parents=True)
    (folder / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (folder / "random.md").symlink_to("/dev/urandom")
    with (folder / "huge.md").open("wb") as stream:
        stream.truncate(1 << 30)
    (folder / "latin.md").write_bytes(b"caf\xe9 $ARGUMENTS")
    (folder / "\x1b[2Jclear.md").write_text("hi")
    (folder / "good.md").write_text("Do $ARGUMENTS")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "sock.md"))
        load = load_commands(command_folders(tmp_path, None))
    assert [command.name for command in load.commands] == ["good"]
    problems = "\n".join(load.problems)
    assert "huge.md: it is 1048576 KB" in problems and "latin.md: not UTF-8" in problems
    assert "cannot be part of a command name" in problems
