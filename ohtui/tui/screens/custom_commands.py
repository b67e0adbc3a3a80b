"""Custom slash commands: Markdown prompts in `.ohtui/commands/` and the user's config folder.

A file's name is the command's name (`review.md` is `/review`; `git/pr.md` in a subfolder is
`/git:pr`, as in Claude Code). Optional YAML frontmatter gives a `description` and an
`argument-hint` (`argument_hint` too); the body is the prompt sent to the agent as a user
message, with `$ARGUMENTS` replaced by the text typed after the command and `$1`, `$2`... by its
words. A workspace command wins over a user one of the same name; a built-in command always
wins. A file that cannot be used is left out with a problem naming it and what is wrong; the
others still load. Reading happens off the UI thread (see `CustomCommands` in the chat screen).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ohtui.tui.slash import SlashCommand

WORKSPACE_FOLDER = Path(".ohtui") / "commands"
"""Where a workspace keeps its commands, under its root."""
MAX_BYTES = 64 * 1024
"""The largest command file read: a prompt, not a document."""
MAX_FILES = 500
"""The most command files read from one folder (a folder of thousands is a mistake)."""
_NAME_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_POSITIONAL = re.compile(r"\$(\d+)")

Scope = Literal["workspace", "user"]

Signature = tuple[tuple[str, int, int], ...]
"""What the command files look like on disk: (path, mtime_ns, size) each; a change reloads."""


@dataclass(frozen=True, kw_only=True)
class CustomCommand(SlashCommand):
    """A slash command read from a Markdown file: its body is the prompt it sends."""

    prompt: str
    """The file's body: the message sent, once its placeholders are filled."""
    source: Path
    """The file it was read from."""
    scope: Scope
    """Whether it came from the workspace or from the user's config folder."""

    def expand(self, arguments: str) -> str:
        """The prompt with `$ARGUMENTS` and `$1`, `$2`... filled from `arguments`; arguments
        given to a prompt that has no placeholder are added after it."""
        arguments = arguments.strip()
        placed = "$ARGUMENTS" in self.prompt or _POSITIONAL.search(self.prompt) is not None
        text = self.prompt.replace("$ARGUMENTS", arguments)
        if _POSITIONAL.search(text) is not None:
            words = _words(arguments)
            text = _POSITIONAL.sub(
                lambda m: words[int(m[1]) - 1] if 0 < int(m[1]) <= len(words) else "", text
            )
        text = text.strip()
        if arguments and not placed:
            text = f"{text}\n\n{arguments}"
        return text


@dataclass
class CommandLoad:
    """The commands read (workspace ones first, by name) and a problem per file left out."""

    commands: list[CustomCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def command_folders(workspace: Path | None, user_folder: Path | None) -> list[tuple[Path, Scope]]:
    """The folders commands are read from, the one that wins a name first."""
    folders: list[tuple[Path, Scope]] = []
    if workspace is not None:
        folders.append((workspace / WORKSPACE_FOLDER, "workspace"))
    if user_folder is not None:
        folders.append((user_folder, "user"))
    return folders


def _files(folder: Path) -> list[Path]:
    """The `.md` files under `folder`, sorted (none when it is missing or unreadable)."""
    if not folder.is_dir():
        return []
    try:
        return sorted(p for p in folder.rglob("*.md") if p.is_file())[:MAX_FILES]
    except OSError:
        return []


def signature(folders: Iterable[tuple[Path, Scope]]) -> Signature:
    """The command files as they are on disk now (cheap: a listing and a stat per file)."""
    entries: list[tuple[str, int, int]] = []
    for folder, _ in folders:
        for path in _files(folder):
            try:
                stat = path.stat()
            except OSError:
                entries.append((str(path), -1, -1))
                continue
            entries.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


def load_commands(folders: Iterable[tuple[Path, Scope]]) -> CommandLoad:
    """Every usable command in `folders` (an earlier folder wins a name), and a problem per
    file that could not be used."""
    result = CommandLoad()
    seen: set[str] = set()
    for folder, scope in folders:
        for path in _files(folder):
            try:
                command = read_command(path, folder, scope)
            except CommandFileError as exc:
                result.problems.append(str(exc))
                continue
            if command.name in seen:
                continue  # the workspace's of that name wins
            seen.add(command.name)
            result.commands.append(command)
    return result


class CommandFileError(ValueError):
    """A command file that cannot be used; the message names the file and what is wrong."""


def read_command(path: Path, folder: Path, scope: Scope) -> CustomCommand:
    """The command in `path` (under `folder`); CommandFileError saying what is wrong."""
    shown = shown_path(path, scope)
    relative = path.relative_to(folder).with_suffix("")
    parts = relative.parts
    bad = next((part for part in parts if not _NAME_PART.match(part)), None)
    if bad is not None:
        raise CommandFileError(
            f"{shown}: {bad!r} cannot be part of a command name (letters, digits, '-', '_' and "
            "'.' only, no spaces); rename the file"
        )
    name = ":".join(parts)
    if scope == "workspace" and not _inside(path, folder.parents[len(WORKSPACE_FOLDER.parts) - 1]):
        # A project's file linked to the user's keys would send them to the model when typed.
        raise CommandFileError(
            f"{shown}: it links outside the workspace; a project's command must be a file of "
            "the project (copy it in, or keep it in your own commands folder)"
        )
    try:
        text = _read_bounded(path, shown).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandFileError(f"{shown}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise CommandFileError(f"{shown}: cannot read it ({exc.strerror or exc})") from exc
    metadata, body = _split_frontmatter(text, shown)
    body = body.strip()
    if not body:
        raise CommandFileError(f"{shown}: it has no prompt (write it below the frontmatter)")
    description = _text(metadata, ("description",), shown) or _first_line(body)
    hint = _text(metadata, ("argument-hint", "argument_hint"), shown)
    takes_argument = bool(hint) or "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None
    return CustomCommand(
        name=name,
        description=description,
        takes_argument=takes_argument,
        argument_hint=hint or "",
        prompt=body,
        source=path,
        scope=scope,
    )


def _inside(path: Path, root: Path) -> bool:
    """Whether `path`, its links followed, is within `root` (a link loop is not)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # RuntimeError: a loop of links, before Python 3.13
        return False


def _read_bounded(path: Path, shown: str) -> bytes:
    """The bytes of the regular file at `path`, at most MAX_BYTES: opened without blocking
    and judged on its descriptor, so a file swapped for a FIFO, a device or a larger file
    after it was listed is refused, not waited on or read whole."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as stream:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise CommandFileError(f"{shown}: not a regular file")
        if status.st_size > MAX_BYTES:
            raise CommandFileError(
                f"{shown}: it is {status.st_size // 1024} KB; a command file may be at most "
                f"{MAX_BYTES // 1024} KB"
            )
        data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:  # grew since its size was read
        raise CommandFileError(f"{shown}: a command file may be at most {MAX_BYTES // 1024} KB")
    return data


def shown_path(path: Path, scope: Scope) -> str:
    """The file as a notice names it: from the workspace's root, or ~-shortened."""
    if scope == "workspace":
        parts = path.parts
        for i in range(len(parts) - 1):
            if parts[i : i + 2] == (".ohtui", "commands"):
                return str(Path(*parts[i:]))
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + "/") else text


def _split_frontmatter(text: str, shown: str) -> tuple[dict[str, Any], str]:
    """The frontmatter (between `---` lines at the top) and the body after it.

    YAML first; frontmatter YAML refuses but that is plain `key: value` lines (Claude Code's
    `argument-hint: [file] [line]`) is read as such lines, so files written for it work."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise CommandFileError(
            f"{shown}: the frontmatter opened by '---' on line 1 is never closed; end it with "
            "a line of '---'"
        )
    raw = "".join(lines[1:end])
    body = "".join(lines[end + 1 :])
    import yaml  # only files with frontmatter pay for it (and off the UI thread)

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        plain = _plain_lines(lines[1:end])
        if plain is not None:
            return plain, body
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CommandFileError(
            f"{shown}{where}: the frontmatter is not valid YAML ({problem})"
        ) from exc
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise CommandFileError(
            f"{shown}: the frontmatter must be 'key: value' lines, not a {type(data).__name__}"
        )
    return data, body


def _plain_lines(lines: Sequence[str]) -> dict[str, Any] | None:
    """`key: value` lines as text (quotes around a value dropped); None if one is not."""
    data: dict[str, Any] = {}
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, colon, value = stripped.partition(":")
        if not colon or not key.strip() or " " in key.strip():
            return None
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        data[key.strip()] = value
    return data


def _text(metadata: dict[str, Any], keys: tuple[str, ...], shown: str) -> str | None:
    """The first of `keys` as one line of text (a YAML list as `[a] [b]`), None if absent."""
    for key in keys:
        value = metadata.get(key)
        if value is None:
            continue
        if isinstance(value, list):  # `argument-hint: [file]` is a YAML list
            return " ".join(f"[{item}]" for item in value)
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise CommandFileError(f"{shown}: '{key}' must be a line of text, not {value!r}")
        return " ".join(str(value).split())
    return None


def _first_line(body: str) -> str:
    """The prompt's first line, as a description when the file gives none."""
    line = next((line.strip() for line in body.splitlines() if line.strip()), "")
    line = line.lstrip("#").strip()
    return line if len(line) <= 60 else line[:59].rstrip() + "…"


def _words(arguments: str) -> list[str]:
    """The arguments split as a shell would (quotes keep words together), or at spaces."""
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: split plainly rather than refuse
        return arguments.split()


def merge(
    builtins: Sequence[SlashCommand], custom: Sequence[CustomCommand], taken: set[str]
) -> tuple[list[SlashCommand], list[CustomCommand]]:
    """The built-ins then the custom commands that do not reuse a built-in name (or alias)
    in `taken`; and the custom commands left out for that."""
    kept = [command for command in custom if command.name not in taken]
    shadowed = [command for command in custom if command.name in taken]
    return [*builtins, *kept], shadowed
