"""The composer: sending, new lines, prompt history, `/` and `@` completion, keys that bubble."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import OptionList

import ohtui.tui.widgets.composer as composer_module
from ohtui.tui.file_index import FileIndex, index_workspace
from ohtui.tui.history import PromptHistory
from ohtui.tui.slash import SlashCommand, filter_commands
from ohtui.tui.widgets.composer import INDEXING_LABEL, Composer, ComposerInput

pytestmark = pytest.mark.anyio

COMMANDS = (
    SlashCommand("help", "keys and commands"),
    SlashCommand("ask", "ask a side question", takes_argument=True),
    SlashCommand("task", "show the task list"),
    SlashCommand("new", "start a new conversation"),
)


@pytest.fixture
def anyio_backend() -> str:
    """Textual runs on asyncio."""
    return "asyncio"


class Host(App[None]):
    """A bare app around one Composer that records what reaches it."""

    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("escape", "record('escape')"),
        Binding("ctrl+c", "record('ctrl+c')"),
        Binding("ctrl+p", "record('ctrl+p')"),
    ]

    def __init__(self, composer: Composer) -> None:
        super().__init__()
        self.composer = composer
        self.submitted: list[str] = []
        self.keys: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.composer

    def on_mount(self) -> None:
        self.composer.focus_input()

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        self.submitted.append(message.text)

    def action_record(self, key: str) -> None:
        self.keys.append(key)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project tree, with directories the index must skip."""
    root = tmp_path / "workspace"
    for relative in (
        "README.md",
        "src/pkg/module.py",
        "src/pkg/other.txt",
        "src/pkg/helper_utils.py",
        "docs/guide.md",
        ".git/config",
        ".hidden/secret.txt",
        "node_modules/lib/zzindex.js",
        ".venv/lib/zzsite.py",
        "venv/lib/zzsite.py",
        "__pycache__/zzmod.pyc",
        ".mypy_cache/zzcache.json",
        ".pytest_cache/zzcache.json",
        "dist/zzwheel.whl",
        "build/zzout.o",
    ):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    return root


@pytest.fixture
def history_path(tmp_path: Path) -> Path:
    """Where the prompt history lives (not created)."""
    return tmp_path / "state" / "history.jsonl"


def make_host(
    workspace: Path | None = None,
    history: PromptHistory | None = None,
    commands: tuple[SlashCommand, ...] = COMMANDS,
) -> Host:
    """A host app around a fresh composer."""
    return Host(Composer(workspace=workspace, history=history, commands=commands))


def write_history(path: Path, texts: list[str]) -> None:
    """Write a history file holding `texts`, oldest first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"text": text, "ts": 1_700_000_000 + i}) for i, text in enumerate(texts)]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the app run until `condition()` holds, failing after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the condition")
        await pilot.pause(0.01)


def menu(app: Host) -> OptionList:
    """The composer's completion menu."""
    return app.query_one("#completions", OptionList)


def labels(app: Host) -> list[str]:
    """The menu's rows as plain text."""
    return [str(option.prompt) for option in menu(app).options]


def index_ready(app: Host) -> Callable[[], bool]:
    """A condition: the `@` menu shows paths rather than "indexing files…"."""
    return lambda: app.composer.completion_open and INDEXING_LABEL not in labels(app)


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Press one key per character."""
    await pilot.press(*text)


# --- 1. sending and new lines


async def test_enter_submits_clears_and_saves_to_history(history_path: Path) -> None:
    app = make_host(history=PromptHistory(history_path))
    async with app.run_test() as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        assert app.submitted == ["hello"]
        assert app.composer.text == ""
        await wait_for(pilot, history_path.exists)
        records = [json.loads(line) for line in history_path.read_text("utf-8").splitlines()]
        assert [record["text"] for record in records] == ["hello"]
        assert isinstance(records[0]["ts"], float)


class HandlingScreen(Screen[None]):
    """A screen that handles what its composer sends, noting whether frames were held."""

    def __init__(self, composer: Composer) -> None:
        super().__init__()
        self.composer = composer
        self.held_when_handled: list[bool] = []

    def compose(self) -> ComposeResult:
        yield self.composer

    def on_composer_submitted(self) -> None:
        self.held_when_handled.append(self.app._batch_count > 0)


async def test_enter_draws_nothing_until_the_screen_has_handled_the_text() -> None:
    """The frame after Enter shows what the text did, not the composer cleared a moment
    before it: no frame is drawn until the screen has handled it, and then they are again."""
    screen = HandlingScreen(Composer(commands=COMMANDS))
    app = App[None]()
    async with app.run_test() as pilot:
        await app.push_screen(screen)
        screen.composer.focus_input()
        for text in ("hello", "/task"):
            screen.composer.text = text
            await pilot.press("enter")
            await pilot.pause()
            assert app._batch_count == 0
            assert screen.composer.text == ""
        assert screen.held_when_handled == [True, True]


async def test_submitted_text_loses_surrounding_blank_lines_only() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        app.composer.text = "\n \n  indented\nsecond line  \n\n"
        await pilot.press("enter")
        assert app.submitted == ["  indented\nsecond line"]


async def test_enter_on_blank_text_does_nothing() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await pilot.press("enter")
        await type_text(pilot, "  ")
        await pilot.press("enter")
        assert app.submitted == []
        assert app.composer.text == "  "  # no newline inserted either


@pytest.mark.parametrize("key", ["shift+enter", "ctrl+j"])
async def test_newline_keys_insert_a_line_break(key: str) -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "ab")
        await pilot.press(key)
        await type_text(pilot, "cd")
        assert app.composer.text == "ab\ncd"
        assert app.submitted == []
        await pilot.press("enter")
        assert app.submitted == ["ab\ncd"]


async def test_input_grows_with_its_text_then_scrolls() -> None:
    app = make_host()
    async with app.run_test(size=(80, 30)) as pilot:
        area = app.query_one("#input", ComposerInput)
        one_line = area.outer_size.height
        await pilot.press("a", "ctrl+j", "b")
        assert area.outer_size.height == one_line + 1
        await pilot.press(*["ctrl+j"] * 20)
        assert area.outer_size.height == one_line + 7  # capped: 8 lines of text


# --- 2. prompt history


async def test_up_and_down_walk_history_and_restore_the_draft(history_path: Path) -> None:
    write_history(history_path, ["first", "second"])
    history = PromptHistory(history_path)
    app = make_host(history=history)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: history.loaded)
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.composer.text == "second"
        await pilot.press("up")
        assert app.composer.text == "first"
        await pilot.press("up")  # the oldest entry stays
        assert app.composer.text == "first"
        await pilot.press("down")
        assert app.composer.text == "second"
        await pilot.press("down")
        assert app.composer.text == "draft"
        await pilot.press("down")  # past the draft: nothing more
        assert app.composer.text == "draft"


async def test_editing_a_recalled_entry_leaves_the_history_alone(history_path: Path) -> None:
    write_history(history_path, ["first", "second"])
    history = PromptHistory(history_path)
    app = make_host(history=history)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: history.loaded)
        await pilot.press("up")
        await type_text(pilot, "X")
        assert app.composer.text == "secondX"
        assert history.entries == ["first", "second"]
        await pilot.press("up")
        assert app.composer.text == "first"
        await pilot.press("down")
        assert app.composer.text == "second"


async def test_up_and_down_move_the_cursor_inside_a_multiline_text(history_path: Path) -> None:
    write_history(history_path, ["old prompt"])
    history = PromptHistory(history_path)
    app = make_host(history=history)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: history.loaded)
        area = app.query_one("#input", ComposerInput)
        await pilot.press("a", "ctrl+j", "b", "ctrl+j", "c")
        await pilot.press("up")
        assert app.composer.text == "a\nb\nc"
        assert area.cursor_location[0] == 1
        await pilot.press("up")
        assert area.cursor_location[0] == 0
        await pilot.press("down", "down")
        assert area.cursor_location[0] == 2
        assert app.composer.text == "a\nb\nc"
        await pilot.press("up", "up", "up")  # now on the first line: recall
        assert app.composer.text == "old prompt"


async def test_a_recalled_command_does_not_open_the_menu(history_path: Path) -> None:
    write_history(history_path, ["/help"])
    history = PromptHistory(history_path)
    app = make_host(history=history)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: history.loaded)
        await pilot.press("up")
        assert app.composer.text == "/help"
        assert not app.composer.completion_open
        await pilot.press("enter")
        assert app.submitted == ["/help"]


async def test_a_sent_prompt_is_recalled_at_once(history_path: Path) -> None:
    history = PromptHistory(history_path)
    app = make_host(history=history)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: history.loaded)
        await type_text(pilot, "one")
        await pilot.press("enter", "up")
        assert app.composer.text == "one"


def test_history_persists_across_instances(history_path: Path) -> None:
    first = PromptHistory(history_path)
    first.load()  # a missing file is an empty history
    assert first.entries == []
    assert first.add("one")
    assert first.add("two\nlines")
    assert not first.add("two\nlines")  # an exact repeat of the last entry
    assert not first.add("  \n ")
    assert first.add("one")  # a repeat of an older entry is kept
    second = PromptHistory(history_path)
    second.load()
    assert second.entries == ["one", "two\nlines", "one"]


def test_corrupt_lines_are_skipped_and_logged(
    history_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    history_path.parent.mkdir(parents=True)
    history_path.write_bytes(
        b'{"text": "good one", "ts": 1}\n'
        b"{not json\n"
        b"\xff\xfe\x00 latin-1 \xe9\n"
        b'{"ts": 2}\n'
        b"[1, 2]\n"
        b"\n"
        b'{"text": "caf\xc3\xa9", "ts": 3}\n'
    )
    history = PromptHistory(history_path)
    with caplog.at_level(logging.WARNING, logger="ohtui.tui.history"):
        history.load()
    assert history.entries == ["good one", "café"]
    assert "Skipped 4 unreadable line(s)" in caplog.text


def test_a_line_cut_short_by_a_crash_does_not_swallow_the_next(history_path: Path) -> None:
    history_path.parent.mkdir(parents=True)
    history_path.write_text('{"text": "kept", "ts": 1}\n{"text": "cut sh', encoding="utf-8")
    PromptHistory(history_path).add("next")
    reloaded = PromptHistory(history_path)
    reloaded.load()
    assert reloaded.entries == ["kept", "next"]


def test_the_file_is_trimmed_to_the_limit_atomically(history_path: Path) -> None:
    history = PromptHistory(history_path, limit=3)
    for i in range(6):
        history.add(f"prompt {i}")
    assert len(history_path.read_text("utf-8").splitlines()) == 6  # not past 2x limit yet
    history.add("prompt 6")
    assert len(history_path.read_text("utf-8").splitlines()) == 3
    assert history.entries == ["prompt 4", "prompt 5", "prompt 6"]
    assert list(history_path.parent.iterdir()) == [history_path]  # no temporary file left
    reloaded = PromptHistory(history_path, limit=3)
    reloaded.load()
    assert reloaded.entries == ["prompt 4", "prompt 5", "prompt 6"]


def test_loading_an_oversized_file_keeps_the_newest_entries(history_path: Path) -> None:
    write_history(history_path, [f"p{i}" for i in range(10)])
    history = PromptHistory(history_path, limit=4)
    history.load()
    assert history.entries == ["p6", "p7", "p8", "p9"]
    assert len(history_path.read_text("utf-8").splitlines()) == 4


def test_io_errors_are_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    history = PromptHistory(blocker / "history.jsonl")  # its parent is a file
    with caplog.at_level(logging.ERROR, logger="ohtui.tui.history"):
        assert history.add("still remembered")
        history.load()
    assert history.entries == ["still remembered"]
    assert "Could not save the prompt history" in caplog.text


def test_prompts_remembered_before_loading_survive_the_load(history_path: Path) -> None:
    write_history(history_path, ["from disk"])
    history = PromptHistory(history_path)
    assert history.remember("typed early")
    history.load()
    assert history.entries == ["from disk", "typed early"]
    history.flush()
    reloaded = PromptHistory(history_path)
    reloaded.load()
    assert reloaded.entries == ["from disk", "typed early"]


def test_concurrent_adds_lose_nothing(history_path: Path) -> None:
    history = PromptHistory(history_path, limit=10_000)
    errors: list[BaseException] = []

    def add_many(worker: int) -> None:
        try:
            for i in range(50):
                history.add(f"w{worker}-{i}")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=add_many, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    reloaded = PromptHistory(history_path, limit=10_000)
    reloaded.load()
    assert sorted(reloaded.entries) == sorted(f"w{w}-{i}" for w in range(4) for i in range(50))


# --- 3. slash commands


def test_filter_commands_prefers_prefix_matches() -> None:
    assert [command.name for command in filter_commands(COMMANDS, "as")] == ["ask", "task"]
    assert [command.name for command in filter_commands(COMMANDS, "")] == [
        "help",
        "ask",
        "task",
        "new",
    ]
    assert filter_commands(COMMANDS, "zzz") == []


async def test_slash_menu_filters_as_you_type() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await pilot.press("/")
        assert app.composer.completion_open
        assert labels(app) == [
            "/help  keys and commands",
            "/ask  ask a side question",
            "/task  show the task list",
            "/new  start a new conversation",
        ]
        await type_text(pilot, "as")
        assert labels(app) == ["/ask  ask a side question", "/task  show the task list"]
        await type_text(pilot, "zz")
        assert not app.composer.completion_open
        await pilot.press("backspace", "backspace", "backspace", "backspace", "n")
        assert labels(app) == ["/new  start a new conversation"]
        await type_text(pilot, "ew x")  # whitespace: the command is typed, the menu goes
        assert not app.composer.completion_open


async def test_tab_accepts_a_command_that_takes_an_argument() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/a")
        await pilot.press("tab")
        assert app.composer.text == "/ask "
        assert not app.composer.completion_open
        assert app.submitted == []
        await type_text(pilot, "why?")
        await pilot.press("enter")
        assert app.submitted == ["/ask why?"]


async def test_enter_accepts_a_command_with_an_argument_without_sending() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/as")
        await pilot.press("enter")
        assert app.composer.text == "/ask "
        assert app.submitted == []


async def test_enter_on_a_command_without_argument_sends_it_at_once() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/he")
        await pilot.press("enter")
        assert app.submitted == ["/help"]
        assert app.composer.text == ""
        assert not app.composer.completion_open


async def test_tab_on_a_command_without_argument_completes_then_enter_sends() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/ta")
        await pilot.press("tab")
        assert app.composer.text == "/task"
        assert not app.composer.completion_open
        await pilot.press("enter")
        assert app.submitted == ["/task"]


async def test_up_and_down_move_in_the_menu() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await pilot.press("/")
        assert menu(app).highlighted == 0
        await pilot.press("down", "down")
        assert menu(app).highlighted == 2
        await pilot.press("up")
        assert menu(app).highlighted == 1
        assert app.composer.text == "/"  # the keys moved the menu, not the cursor
        await pilot.press("tab")
        assert app.composer.text == "/ask "


async def test_clicking_a_row_accepts_it() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await pilot.press("/")
        await pilot.click("#completions", offset=(3, 1))
        assert app.composer.text == "/ask "
        assert app.query_one("#input").has_focus


async def test_set_commands_replaces_the_menu() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await pilot.press("/")
        app.composer.set_commands([SlashCommand("zap", "zap it")])
        await pilot.pause()
        assert labels(app) == ["/zap  zap it"]


# --- 4. @ completion


def test_index_skips_hidden_and_build_dirs(workspace: Path) -> None:
    index = index_workspace(workspace)
    assert set(index.paths) == {
        "README.md",
        "docs/",
        "docs/guide.md",
        "src/",
        "src/pkg/",
        "src/pkg/helper_utils.py",
        "src/pkg/module.py",
        "src/pkg/other.txt",
    }
    assert index.paths.index("src/") < index.paths.index("src/pkg/")  # shallow first


def test_index_is_capped(workspace: Path) -> None:
    assert len(index_workspace(workspace, limit=3).paths) == 3


def test_index_lists_special_files_without_opening_them(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(workspace / "pipe")  # opening it would wait for a writer forever
    (workspace / "loop").symlink_to("loop")
    (workspace / "zero").symlink_to("/dev/zero")
    monkeypatch.chdir(workspace)  # a relative bind keeps clear of the 108-byte path limit
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        found: list[FileIndex] = []
        walk = threading.Thread(target=lambda: found.append(index_workspace(workspace)))
        walk.daemon = True
        walk.start()
        walk.join(timeout=10)
    assert found, "indexing blocked on a special file"
    assert {"pipe", "loop", "zero", "sock"} <= set(found[0].paths)


def test_quick_matches_rank_path_prefix_then_basename_prefix() -> None:
    index = FileIndex(["Makefile", "src/", "src/main.py", "docs/", "docs/src-notes.md"], 0.0)
    assert index.quick_matches("src") == ["src/", "src/main.py", "docs/src-notes.md"]
    assert index.quick_matches("MA") == ["Makefile", "src/main.py"]
    assert index.quick_matches("src/") == ["src/main.py"]  # not the directory itself
    assert index.quick_matches("ma", limit=1) == ["Makefile"]
    assert index.substring_matches("notes", [], 20) == ["docs/src-notes.md"]
    assert index.substring_matches("s", ["src/", "src/main.py"], 20) == [
        "docs/",
        "docs/src-notes.md",
    ]


async def test_at_completes_a_nested_file(workspace: Path) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await type_text(pilot, "look at @MOD")
        await wait_for(pilot, index_ready(app))
        assert labels(app) == ["src/pkg/module.py"]
        await pilot.press("tab")
        assert app.composer.text == "look at @src/pkg/module.py "
        assert not app.composer.completion_open


async def test_at_completes_a_directory_and_keeps_going(workspace: Path) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await type_text(pilot, "@pk")
        await wait_for(pilot, index_ready(app))
        assert labels(app)[0] == "src/pkg/"
        await pilot.press("enter")
        assert app.composer.text == "@src/pkg/"
        assert app.submitted == []
        assert app.composer.completion_open
        assert labels(app) == ["src/pkg/helper_utils.py", "src/pkg/module.py", "src/pkg/other.txt"]
        await type_text(pilot, "o")
        await pilot.press("enter")
        assert app.composer.text == "@src/pkg/other.txt "


async def test_at_offers_substring_matches_found_off_the_ui_thread(workspace: Path) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await type_text(pilot, "@utils")
        await wait_for(pilot, lambda: labels(app) == ["src/pkg/helper_utils.py"])
        await pilot.press("tab")
        assert app.composer.text == "@src/pkg/helper_utils.py "


async def test_at_never_offers_skipped_dirs(workspace: Path) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await pilot.press("@")
        await wait_for(pilot, index_ready(app))
        assert labels(app) == [
            "README.md",
            "docs/",
            "src/",
            "docs/guide.md",
            "src/pkg/",
            "src/pkg/helper_utils.py",
            "src/pkg/module.py",
            "src/pkg/other.txt",
        ]
        await type_text(pilot, "zz")  # every file in a skipped dir starts with zz
        await pilot.pause(0.2)
        assert not app.composer.completion_open


async def test_at_needs_a_word_start(workspace: Path) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await type_text(pilot, "me@REA")
        await pilot.pause(0.1)
        assert not app.composer.completion_open


@pytest.fixture
def slow_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Make workspace walks wait until the test sets the returned event."""
    release = threading.Event()
    real = composer_module.index_workspace

    def waiting(root: Path, *args: object, **kwargs: object) -> FileIndex:
        release.wait(10)
        return real(root)

    monkeypatch.setattr(composer_module, "index_workspace", waiting)
    try:
        yield release
    finally:
        release.set()  # never leave a worker thread blocked


async def test_menu_says_indexing_until_the_index_is_ready(
    workspace: Path, slow_index: threading.Event
) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await type_text(pilot, "@READ")
        assert app.composer.completion_open
        assert labels(app) == [INDEXING_LABEL]
        assert menu(app).options[0].disabled
        await pilot.press("tab")  # nothing to accept
        assert app.composer.text == "@READ"
        slow_index.set()
        await wait_for(pilot, index_ready(app))
        assert labels(app) == ["README.md"]


async def test_the_index_is_refreshed_when_the_menu_reopens_after_it_aged(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await pilot.press("@")
        await wait_for(pilot, index_ready(app))
        await type_text(pilot, "brand")
        await pilot.pause(0.1)
        assert not app.composer.completion_open  # no such file yet
        (workspace / "brand_new.txt").write_text("x", encoding="utf-8")
        await pilot.press("space")
        await type_text(pilot, "@bran")  # a fresh index is not rebuilt
        await pilot.pause(0.2)
        assert not app.composer.completion_open
        monkeypatch.setattr(Composer, "INDEX_MAX_AGE", 0.0)
        await pilot.press("space")
        await type_text(pilot, "@bran")
        await wait_for(pilot, lambda: labels(app) == ["brand_new.txt"])


async def test_set_workspace_switches_the_files_offered(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "elsewhere.md").write_text("x", encoding="utf-8")
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        app.composer.set_workspace(other)
        await pilot.press("@")
        await wait_for(pilot, index_ready(app))
        assert labels(app) == ["elsewhere.md"]
        app.composer.set_workspace(None)
        await pilot.pause()
        assert not app.composer.completion_open


# --- Escape, Tab and keys that belong to the app


async def test_escape_closes_the_menu_and_stops_there() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await pilot.press("/")
        assert app.composer.completion_open
        await pilot.press("escape")
        assert not app.composer.completion_open
        assert app.keys == []
        assert app.composer.text == "/"
        await pilot.press("escape")  # no menu: the app gets it
        assert app.keys == ["escape"]
        await type_text(pilot, "h")  # typing on reopens the menu
        assert labels(app) == ["/help  keys and commands"]


async def test_escape_closes_the_at_menu(workspace: Path) -> None:
    app = make_host(workspace=workspace)
    async with app.run_test() as pilot:
        await pilot.press("@")
        await wait_for(pilot, index_ready(app))
        await pilot.press("escape")
        assert not app.composer.completion_open
        assert app.keys == []


@pytest.mark.parametrize("key", ["escape", "ctrl+c", "ctrl+p"])
async def test_keys_the_composer_does_not_use_reach_the_app(key: str) -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "some text")
        await pilot.press(key)
        assert app.keys == [key]
        assert app.composer.text == "some text"


async def test_ctrl_c_copies_a_selection_instead() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "copy me")
        app.query_one("#input", ComposerInput).select_all()
        await pilot.press("ctrl+c")
        assert app.keys == []
        assert app.clipboard == "copy me"


async def test_tab_without_a_menu_inserts_nothing() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        await type_text(pilot, "ab")
        await pilot.press("tab")
        await type_text(pilot, "c")
        assert "\t" not in app.composer.text
        assert app.composer.text.startswith("ab")


# --- the rest of the public API


async def test_text_clear_and_focus_input() -> None:
    app = make_host()
    async with app.run_test() as pilot:
        app.composer.text = "set from code"
        assert app.composer.text == "set from code"
        await type_text(pilot, "!")
        assert app.composer.text == "set from code!"  # the cursor was put at the end
        app.composer.clear()
        assert app.composer.text == ""
        app.set_focus(None)
        await pilot.pause()
        app.composer.focus_input()
        await pilot.pause()
        assert app.query_one("#input").has_focus
