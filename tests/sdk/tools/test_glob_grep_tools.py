"""The glob and grep tools on real files: what they find, in what order, what they leave
out, and that they stay inside the workspace and within bounds."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest

from ohtui.sdk.tool import Tool, resolve_tool
from ohtui.sdk.tools.glob import GlobAction, GlobExecutor, GlobObservation
from ohtui.sdk.tools.glob.pattern import GlobPatternError, compile_glob
from ohtui.sdk.tools.glob.walk import Walk
from ohtui.sdk.tools.grep import GrepAction, GrepExecutor, GrepObservation
from ohtui.sdk.workspace.local import LocalWorkspace


@pytest.fixture
def project(workspace: Path) -> Path:
    files = {
        "src/app.py": "def main():\n    print('Hello World')\n",
        "src/util.py": "X = 1\n",
        "src/web/page.ts": "export const hello = 1;\n",
        "src/web/page.tsx": "<p>hello</p>\n",
        "README.md": "A project that says hello.\n",
        ".env": "HELLO=secret\n",
        "node_modules/dep/index.js": "hello\n",
    }
    for index, (name, text) in enumerate(files.items()):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + index, 1_000_000 + index))
    return workspace


def glob(root: Path, pattern: str, path: str | None = None) -> GlobObservation:
    return GlobExecutor(str(root))(GlobAction(pattern=pattern, path=path))


def grep(root: Path, pattern: str, **fields: str) -> GrepObservation:
    return GrepExecutor(str(root))(GrepAction(pattern=pattern, **fields))


def names(paths: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


# --- patterns -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.py", True),
        ("src/*.py", "src/a/c.py", False),
        ("src/**/*.py", "src/c.py", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("**/*.{ts,tsx}", "x/y.tsx", True),
        ("**/*.{ts,tsx}", "x/y.js", False),
        ("test_?.py", "test_1.py", True),
        ("[!a]*.md", "README.md", True),
        ("[!R]*.md", "README.md", False),
        ("*.{json,{yaml,yml}}", "conf.yml", True),
    ],
)
def test_patterns_read_as_ripgrep_reads_them(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).fullmatch(path)) is matches


def test_an_unclosed_brace_is_a_clear_error() -> None:
    with pytest.raises(GlobPatternError, match="never closed"):
        compile_glob("*.{py,ts")


# --- glob ---------------------------------------------------------------------------------


def test_glob_lists_matches_newest_first(project: Path) -> None:
    obs = glob(project, "**/*.py")
    assert not obs.is_error
    assert names(obs.files, project) == ["src/util.py", "src/app.py"]
    assert obs.search_path == str(project.resolve())
    assert "Found 2 file(s)" in obs.text


def test_glob_skips_hidden_and_bulky_folders_unless_the_pattern_names_them(
    project: Path,
) -> None:
    assert names(glob(project, "*").files, project) == [
        "README.md",
        "src/web/page.tsx",
        "src/web/page.ts",
        "src/util.py",
        "src/app.py",
    ]
    assert names(glob(project, ".env").files, project) == [".env"]
    assert names(glob(project, "node_modules/**/*.js").files, project) == [
        "node_modules/dep/index.js"
    ]


def test_glob_takes_a_folder_or_an_absolute_pattern(project: Path) -> None:
    assert names(glob(project, "*.ts*", path="src/web").files, project) == [
        "src/web/page.tsx",
        "src/web/page.ts",
    ]
    obs = glob(project, f"{project}/src/**/*.py")
    assert names(obs.files, project) == ["src/util.py", "src/app.py"]
    assert obs.search_path == str(project / "src")


def test_glob_finding_nothing_says_so(project: Path) -> None:
    obs = glob(project, "**/*.rs")
    assert not obs.is_error and obs.files == []
    assert "No files found matching pattern '**/*.rs'" in obs.text


def test_glob_refuses_folders_outside_the_workspace(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x\n")
    (project / "link").symlink_to(outside)
    for obs in (
        glob(project, "*.py", path=str(outside)),
        glob(project, f"{outside}/*.py"),
        glob(project, "*.py", path="../outside"),
        glob(project, "*.py", path="link"),
    ):
        assert obs.is_error and obs.files == []
        assert "outside the workspace" in obs.text
    # Walking the workspace does not follow the link out of it either.
    assert "secret.py" not in " ".join(glob(project, "**/*.py").files)


def test_links_to_files_inside_the_workspace_are_listed_and_searched(project: Path) -> None:
    (project / "alias.py").symlink_to(project / "src" / "app.py")
    found = glob(project, "alias.py").files
    assert found == [str(project.resolve() / "alias.py")] and os.path.islink(found[0])
    assert "alias.py" in names(grep(project, "hello world").matches, project)


def test_glob_lists_at_most_100_files_and_says_more_matched(workspace: Path) -> None:
    for index in range(105):
        (workspace / f"f{index:03}.txt").write_text("x")
    obs = glob(workspace, "*.txt")
    assert len(obs.files) == 100 and obs.truncated
    assert "truncated to the first 100 files" in obs.text


def test_a_walk_stops_at_its_entry_limit_and_says_so(workspace: Path) -> None:
    for index in range(30):
        (workspace / f"f{index:02}.txt").write_text("x")
    walk = Walk(workspace, max_entries=10)
    assert len(list(walk.files())) == 10
    assert walk.stopped == "stopped after 10 entries"


def test_glob_is_registered_and_read_only(workspace: Path) -> None:
    state = types.SimpleNamespace(workspace=LocalWorkspace(working_dir=str(workspace)))
    [tool] = resolve_tool(Tool(name="glob"), state)  # type: ignore[arg-type]
    assert tool.name == "glob" and tool.is_read_only
    assert str(workspace) in tool.description


# --- grep ---------------------------------------------------------------------------------


def test_grep_finds_files_by_content_ignoring_case(project: Path) -> None:
    obs = grep(project, "hello")
    assert not obs.is_error
    assert names(obs.matches, project) == [
        "README.md",
        "src/web/page.tsx",
        "src/web/page.ts",
        "src/app.py",
    ]


def test_grep_include_filters_by_file_name(project: Path) -> None:
    obs = grep(project, r"hel+o", include="*.{ts,tsx}")
    assert names(obs.matches, project) == ["src/web/page.tsx", "src/web/page.ts"]
    assert obs.include_pattern == "*.{ts,tsx}"
    assert "(filtered by '*.{ts,tsx}')" in obs.text


def test_grep_skips_binary_and_oversized_files(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "blob.bin").write_bytes(b"hello\0\1\2")
    (project / "big.txt").write_text("hello " * 50)
    monkeypatch.setattr("ohtui.sdk.tools.grep.impl.MAX_FILE_BYTES", 100)
    found = names(grep(project, "hello").matches, project)
    assert "blob.bin" not in found and "big.txt" not in found
    assert "README.md" in found


def test_grep_bad_regex_and_bad_folder_are_errors(project: Path, tmp_path: Path) -> None:
    bad = grep(project, "def (")
    assert bad.is_error and bad.text.startswith("Invalid regex pattern:")
    missing = grep(project, "x", path="no/such/dir")
    assert missing.is_error and "is not a valid directory (it does not exist)" in missing.text
    outside = grep(project, "x", path=str(tmp_path))
    assert outside.is_error and "outside the workspace" in outside.text


def test_grep_does_not_read_through_links(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hello from outside\n")
    (project / "leak.txt").symlink_to(secret)
    assert "leak.txt" not in " ".join(grep(project, "outside").matches)
