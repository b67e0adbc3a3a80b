"""config.toml: defaults, round trips, unknown keys kept, and every kind of invalid file."""

from __future__ import annotations

import os
import socket
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from ohtui.settings.config_file import ConfigFile, LoadedConfig, locate, section_keys
from ohtui.settings.profile import Profile
from ohtui.settings.schema import Settings


def write(tmp_path: Path, text: str) -> ConfigFile:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return ConfigFile(path)


def test_a_missing_file_means_every_default(tmp_path: Path) -> None:
    loaded = ConfigFile(tmp_path / "none.toml").load()
    assert loaded.error is None and not loaded.exists
    assert loaded.settings == Settings()
    assert loaded.settings.confirmation.policy == "risky"
    assert loaded.settings.agent.tools == ["terminal", "file_editor", "task_tracker"]


def test_round_trip_keeps_values_and_writes_only_what_differs(tmp_path: Path) -> None:
    config = ConfigFile(tmp_path / "sub" / "config.toml")
    settings = Settings()
    settings.llm.model = "anthropic/claude-sonnet-4-5"
    settings.llm.temperature = 0.2
    settings.agent.max_iteration_per_run = 40
    settings.ui.theme = "nord"
    settings.storage.conversations_dir = Path("/srv/convs")
    config.save(settings)
    again = config.load()
    assert again.error is None and again.warnings == []
    assert again.settings == settings
    raw = tomllib.loads(config.path.read_text(encoding="utf-8"))
    assert raw == {
        "llm": {"model": "anthropic/claude-sonnet-4-5", "temperature": 0.2},
        "agent": {"max_iteration_per_run": 40},
        "ui": {"theme": "nord"},
        "storage": {"conversations_dir": "/srv/convs"},
    }


def test_saving_keeps_keys_and_tables_we_do_not_know(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        '[llm]\nmodel = "openai/gpt-4o"\nfuture_key = "kept"\n\n[plugins]\nenabled = ["x"]\n',
    )
    settings = config.load().settings
    settings.llm.model = "openai/gpt-5"
    config.save(settings)
    raw = tomllib.loads(config.path.read_text(encoding="utf-8"))
    assert raw["llm"] == {"model": "openai/gpt-5", "future_key": "kept"}
    assert raw["plugins"] == {"enabled": ["x"]}


def test_resetting_a_key_to_its_default_removes_it(tmp_path: Path) -> None:
    config = write(tmp_path, '[llm]\nmodel = "openai/gpt-4o"\ntimeout = 60\n')
    settings = config.load().settings
    settings.llm.timeout = 300.0
    config.save(settings)
    assert tomllib.loads(config.path.read_text(encoding="utf-8")) == {
        "llm": {"model": "openai/gpt-4o"}
    }


def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path: Path) -> None:
    config = ConfigFile(tmp_path / "config.toml")
    for theme in ("nord", "gruvbox", "dracula"):
        settings = Settings()
        settings.ui.theme = theme
        config.save(settings)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]
    assert config.load().settings.ui.theme == "dracula"


def test_a_failed_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path, '[llm]\nmodel = "openai/gpt-4o"\n')

    def disk_full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("ohtui.settings.config_file.os.replace", disk_full)
    with pytest.raises(OSError, match="No space"):
        config.save(Settings())
    monkeypatch.undo()
    assert config.load().settings.llm.model == "openai/gpt-4o"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_update_changes_one_thing_and_keeps_the_rest(tmp_path: Path) -> None:
    config = write(tmp_path, '[llm]\nmodel = "openai/gpt-4o"\n[extra]\na = 1\n')

    def add_rule(settings: Settings) -> None:
        from ohtui.sdk import ApprovalRule

        settings.confirmation.rules = [
            ApprovalRule(tool="terminal", command_prefix="git status", scope="user")
        ]

    config.update(add_rule)
    raw = tomllib.loads(config.path.read_text(encoding="utf-8"))
    assert raw["llm"] == {"model": "openai/gpt-4o"} and raw["extra"] == {"a": 1}
    (rule,) = raw["confirmation"]["rules"]
    assert rule["tool"] == "terminal" and rule["command_prefix"] == "git status"
    assert "scope" not in rule  # every rule in config.toml is a user rule
    loaded = config.load().settings.confirmation.rules
    assert [(r.scope, r.command_prefix) for r in loaded] == [("user", "git status")]


def test_hand_written_rules_keep_the_same_id_from_load_to_load(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        '[[confirmation.rules]]\ntool = "terminal"\ncommand_prefix = "npm test"\n'
        '[[confirmation.rules]]\ntool = "file_editor"\npath_glob = "docs/**"\ndecision = "deny"\n',
    )
    first = [r.id for r in config.load().settings.confirmation.rules]
    second = [r.id for r in config.load().settings.confirmation.rules]
    assert first == second and len(set(first)) == 2


# --- invalid files: the message names the file, the line, the key and what is expected ---


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        (
            '[llm]\nmodel = "x/y"\ntemperature = "hot"\n',
            3,
            'llm.temperature: expected a number (found "hot")',
        ),
        ("[llm]\ntimeout = -1\n", 2, "llm.timeout: expected a number greater than 0 (found -1)"),
        ("[llm]\nnum_retries = 2.5\n", 2, "llm.num_retries: expected a whole number (found 2.5)"),
        (
            '[llm]\nbase_url = "localhost:8000"\n',
            2,
            "llm.base_url: must start with http:// or https://",
        ),
        (
            '[llm]\nreasoning_effort = "max"\n',
            2,
            "llm.reasoning_effort: expected one of 'none', 'minimal', 'low', 'medium' or 'high'",
        ),
        ('[agent]\ntools = ["terminal", "browser"]\n', 2, "agent.tools: unknown tool 'browser'"),
        ('[agent]\ntools = "terminal"\n', 2, "agent.tools: expected a list"),
        (
            "[agent]\nmax_iteration_per_run = 0\n",
            2,
            "agent.max_iteration_per_run: expected a number at least 1 (found 0)",
        ),
        (
            "[agent]\nstuck_detection = 3\n",
            2,
            "agent.stuck_detection: expected true or false (found 3)",
        ),
        (
            "[agent.stuck_thresholds]\nmonologue = 1\n",
            2,
            "agent.stuck_thresholds.monologue: expected a number at least 2 (found 1)",
        ),
        (
            '[confirmation]\npolicy = "sometimes"\n',
            2,
            "confirmation.policy: expected one of 'always', 'risky' or 'never' (found \"some",
        ),
        (
            '[[confirmation.rules]]\ntool = "terminal"\n\n[[confirmation.rules]]\ntool = ""\n',
            5,
            'confirmation.rules[1].tool: must not be empty (found "")',
        ),
        (
            '[[confirmation.rules]]\ntool = "terminal"\ncommand_prefix = "ls"\npath_glob = "*"\n',
            1,
            "confirmation.rules[0]: a rule has a command prefix or a path glob, not both",
        ),
        ("[ui]\ntheme = 1\n", 2, "ui.theme: expected a text in quotes (found 1)"),
        ('[ui]\nexpand_outputs = "yes please"\n', 2, "ui.expand_outputs: expected true or false"),
        ("llm = 3\n", 1, "llm: expected a table (found 3)"),
    ],
)
def test_an_invalid_value_is_named_with_its_line(
    tmp_path: Path, text: str, line: int, expected: str
) -> None:
    config = write(tmp_path, text)
    loaded = config.load()
    error = loaded.error
    assert error is not None
    assert error.line == line
    assert str(error).startswith(f"{config.path}, line {line}: ")
    assert expected in str(error)
    assert "open /settings" in str(error)


def test_a_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    config = write(tmp_path, '[llm]\nmodel = "openai/gpt-4o"\ntemperature = \n')
    error = config.load().error
    assert error is not None and error.line == 3
    assert str(error).startswith(f"{config.path}, line 3: this is not valid TOML, column")


def test_a_file_that_is_not_text_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xff\xfe[llm]\n")
    loaded = ConfigFile(path).load()
    assert loaded.error is not None and "not UTF-8 text" in str(loaded.error)
    assert loaded.settings == Settings()


def test_several_problems_are_listed_and_valid_keys_still_apply(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        '[llm]\nmodel = "openai/gpt-4o"\ntemperature = "hot"\n\n'
        "[agent]\nmax_iteration_per_run = 0\nstuck_detection = false\n",
    )
    loaded = config.load()
    assert loaded.error is not None
    text = str(loaded.error)
    assert "2 problems" in text
    assert "line 3: llm.temperature" in text and "line 6: agent.max_iteration_per_run" in text
    assert loaded.error.line == 3
    # What is valid is used; each invalid key takes its default.
    assert loaded.settings.llm.model == "openai/gpt-4o"
    assert loaded.settings.llm.temperature is None
    assert loaded.settings.agent.stuck_detection is False
    assert loaded.settings.agent.max_iteration_per_run == 500


def test_several_problems_are_listed_in_line_order(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "[agent]\nmax_iteration_per_run = 0\n\n"
        '[llm]\nmodel = "openai/gpt-4o"\ntemperature = "hot"\n',
    )
    loaded = config.load()
    assert loaded.error is not None
    text = str(loaded.error)
    assert text.index("line 2: agent.max_iteration_per_run") < text.index("line 6: llm.temperature")
    assert loaded.error.line == 2


def test_saving_over_an_invalid_file_keeps_a_backup_first(tmp_path: Path) -> None:
    original = '[llm]\nmodel = "openai/gpt-4o"\ntemperature = "hot"\n[mine]\nx = 1\n'
    config = write(tmp_path, original)
    settings = config.load().settings
    settings.llm.temperature = 0.5
    config.save(settings)
    assert (tmp_path / "config.toml.bak").read_text(encoding="utf-8") == original
    raw = tomllib.loads(config.path.read_text(encoding="utf-8"))
    assert raw == {"llm": {"model": "openai/gpt-4o", "temperature": 0.5}, "mine": {"x": 1}}
    assert config.load().error is None


def test_saving_over_a_file_that_does_not_parse_keeps_a_backup(tmp_path: Path) -> None:
    original = "[llm\nmodel = oops\n"
    config = write(tmp_path, original)
    assert config.load().error is not None
    config.save(Settings())
    assert (tmp_path / "config.toml.bak").read_text(encoding="utf-8") == original
    assert config.load().error is None


def test_unknown_keys_are_warned_about_with_a_suggestion(tmp_path: Path) -> None:
    config = write(tmp_path, '[llm]\nmodel = "a/b"\ntemprature = 0.1\n\n[uii]\ntheme = "x"\n')
    loaded = config.load()
    assert loaded.error is None
    assert loaded.warnings == [
        f"{config.path}, line 3: unknown key llm.temprature (kept, not used); "
        "did you mean temperature?",
        f"{config.path}, line 5: unknown table [uii]; did you mean ui?",
    ]


def test_locate_understands_tables_dotted_keys_and_inline_tables() -> None:
    text = (
        "# comment\n"
        'llm.model = "a/b"\n'
        "[agent]\n"
        "stuck_thresholds = { monologue = 1 }\n"
        "[agent.stuck_thresholds]\n"
        "action_error = 1\n"
        "[[confirmation.rules]]\n"
        'tool = "a"\n'
        "[[confirmation.rules]]\n"
        'tool = "b"\n'
    )
    assert locate(text, ["llm", "model"]) == 2
    assert locate(text, ["agent", "stuck_thresholds", "monologue"]) == 4
    assert locate(text, ["agent", "stuck_thresholds", "action_error"]) == 6
    assert locate(text, ["confirmation", "rules", 1, "tool"]) == 10
    assert locate(text, ["confirmation", "rules", 0, "tool"]) == 8
    assert locate(text, ["ui", "theme"]) is None


EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


def test_the_example_file_loads_to_exactly_the_defaults() -> None:
    loaded = ConfigFile(EXAMPLE).load()
    assert loaded.error is None and loaded.warnings == []
    assert loaded.settings == Settings()


def test_the_example_file_documents_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    written = set()
    table = ""
    for raw in text.splitlines():
        line = raw.lstrip("# ").strip()  # commented-out keys count: they have no default
        if line.startswith("[") and line.endswith("]") and " " not in line:
            table = line.strip("[]")
        elif " = " in line:
            written.add(f"{table}.{line.split(' = ')[0]}")
    expected = {
        f"{section}.{key}" for section in Settings.model_fields for key in section_keys(section)
    }
    expected.discard("agent.stuck_thresholds")  # a table of its own, below
    expected |= {
        f"agent.stuck_thresholds.{key}"
        for key in ("action_observation", "action_error", "monologue", "alternating_pattern")
    }
    expected.discard("confirmation.rules")
    expected |= {"confirmation.rules.tool", "confirmation.rules.command_prefix"}
    assert expected <= written, expected - written


# --- what may stand where config.toml should be -----------------------------------------------


def _special(tmp_path: Path, kind: str) -> Path:
    """config.toml as something other than a small UTF-8 text file."""
    path = tmp_path / "config.toml"
    if kind == "fifo":  # blocks a reader until a writer comes: ohtui would never start
        os.mkfifo(path)
    elif kind == "link to a fifo":
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    elif kind == "link to /dev/zero":  # never ends
        path.symlink_to("/dev/zero")
    elif kind == "link to /dev/null":
        path.symlink_to("/dev/null")
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
    elif kind == "link loop":
        path.symlink_to(tmp_path / "loop")
        (tmp_path / "loop").symlink_to(path)
    elif kind == "link to /dev/urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "link to a folder":
        (tmp_path / "folder").mkdir()
        path.symlink_to(tmp_path / "folder")
    elif kind == "link to /proc/self/mem":  # a "regular file" whose read fails
        path.symlink_to("/proc/self/mem")
    elif kind == "too large":
        path.write_text("# " + "x" * (1 << 20) + "\n")
    elif kind == "not UTF-8":
        path.write_bytes(b'[ui]\ntheme = "\xff\xfe"\n')
    return path


REASONS = {
    "fifo": "is not a regular file",
    "link to a fifo": "is not a regular file",
    "link to /dev/zero": "is not a regular file",
    "link to /dev/null": "is not a regular file",
    "folder": "Is a directory",
    "socket": "No such device or address",
    "link loop": "Too many levels of symbolic links",
    "link to /dev/urandom": "is not a regular file",
    "link to a folder": "Is a directory",
    "link to /proc/self/mem": "Input/output error",
    "too large": "is larger than 1 MiB",
    "not UTF-8": "is not UTF-8 text",
}
"""What loading says of each, after "cannot be read (."""


def _within(seconds: float, work: Callable[[], object]) -> object:
    """`work`'s result (or its exception), failing the test if it takes longer (blocked)."""
    outcome: list[tuple[object, BaseException | None]] = []

    def run() -> None:
        try:
            outcome.append((work(), None))
        except BaseException as exc:  # handed to the test's thread
            outcome.append((None, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, "blocked"
    result, error = outcome[0]
    if error is not None:
        raise error
    return result


@pytest.mark.parametrize("kind", REASONS)
def test_no_file_of_settings_but_a_small_text_one_is_read_and_nothing_is_saved_over_it(
    tmp_path: Path, kind: str
) -> None:
    """Loading says why and uses the defaults at once; the values read before the first
    frame are unset; saving refuses (OSError) and leaves what is there as it was."""
    path = _special(tmp_path, kind)
    before = os.lstat(path)
    loaded = _within(10, ConfigFile(path).load)
    assert isinstance(loaded, LoadedConfig)
    assert loaded.settings == Settings()
    assert loaded.error is not None
    assert f"cannot be read ({REASONS[kind]}); the defaults are used." in str(loaded.error)
    assert _within(10, lambda: Profile(path, use_keyring=False).early_value("ui", "theme")) is None
    with pytest.raises(OSError):
        _within(10, lambda: ConfigFile(path).save(Settings()))
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino, after.st_size) == (
        before.st_mode,
        before.st_ino,
        before.st_size,
    )


def test_a_link_to_nothing_is_a_missing_file_and_an_empty_file_sets_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.symlink_to(tmp_path / "gone.toml")
    assert ConfigFile(path).load().error is None
    path.unlink()
    path.write_text("")
    loaded = ConfigFile(path).load()
    assert (loaded.settings, loaded.error) == (Settings(), None)
    head = '[ui]\ntheme = "nord"\n'
    path.write_text(head + "#" * ((1 << 20) - len(head) - 1) + "\n")  # just 1 MiB
    assert path.stat().st_size == 1 << 20
    assert ConfigFile(path).load().settings.ui.theme == "nord"
