"""What an MCP server from a file the user did not write would run, as the user reviews it
before trusting it, and as the trust covers it.

A `Launch` is one server's command line (shell-quoted, every control or invisible character
escaped, so no argument can hide another), its folder, its environment with the user's
secrets it receives, or the URL and headers it is sent; and the files of the workspace it
executes, by content: the program when it lives in the workspace, every file its arguments
or environment name, a Python `-m` module, a runner's manifest (package.json, pyproject.toml
...). Its `fingerprint` is what trusting it agrees to; any change there asks again.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ohtui.terminal_text import shell_line, shell_quoted

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_MODULE_FLAG = re.compile(r"-[bBdEhiIOPqsSuvR]*m(.*)")
"""A python option word ending in `-m` (a module follows: in the word, or as the next)."""
_NODE_RUNNERS = ("npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx", "node", "deno")
_PYTHON_RUNNERS = ("uv", "uvx", "poetry", "pipenv", "pdm", "hatch")
RUNNERS = frozenset({*_NODE_RUNNERS, *_PYTHON_RUNNERS, "make", "just", "cargo", "go", "task"})
"""Programs that run what a manifest in their folder says (`npm start`, `uv run x`)."""
MANIFESTS = (
    "package.json",
    "pyproject.toml",
    "setup.py",
    "Makefile",
    "justfile",
    "Taskfile.yml",
    "Cargo.toml",
    "go.mod",
    "deno.json",
)
"""The files such a runner reads to decide what to run, hashed when the server's folder has them."""


def secret_names(value: str) -> list[str]:
    """The user's secrets a value of `env` or `headers` names (`${NAME}` or `$NAME`)."""
    from ohtui.sdk.mcp.config import secret_names as named  # the engine's reading, on use

    return named(value)


def quote(text: str) -> str:
    """`text` as one shell word, every character a terminal would act on escaped
    (`$'a\\nb'`): a newline, an ANSI sequence or an invisible one cannot disguise what
    follows (see `shell_quoted`)."""
    return shell_quoted(text, word=True)


@dataclass(frozen=True)
class Launch:
    """One server as it would start: what the user reviews, and what trusting it covers."""

    name: str
    transport: str = "stdio"
    argv: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    enabled: bool = True
    files: dict[str, str] = field(default_factory=dict)
    """Workspace files it executes or reads to decide what to run: path -> sha256."""
    error: str | None = None
    """Why its settings cannot be used (it is then listed, and never started)."""
    in_workspace: bool = False
    """It starts in the workspace (a project's server), among files the agent may edit."""

    @property
    def secrets(self) -> list[str]:
        """The user's secrets it receives, in order, once each."""
        values = [v for _, v in self.env] + [v for _, v in self.headers]
        return list(dict.fromkeys(s for v in values for s in secret_names(v)))

    def fingerprint(self) -> dict[str, Any]:
        """What trusting it agrees to, as JSON: everything that decides what runs."""
        return {
            "transport": self.transport,
            "run": list(self.argv),
            "cwd": self.cwd,
            "env": [f"{k}={v}" for k, v in self.env],
            "url": self.url,
            "headers": [f"{k}: {v}" for k, v in self.headers],
            "files": dict(sorted(self.files.items())),
            "error": self.error,
            "enabled": self.enabled,
        }

    def lines(self, known_secrets: Collection[str] | None = None, confined: str = "") -> list[str]:
        """What the user reads: the command line or URL, folder, environment or headers
        (with the secrets they receive), and the workspace files it runs.

        `confined`: where a stdio server runs ("in the sandbox (...)"), shown after its name.
        """
        name = shell_quoted(self.name)
        if self.error is not None:
            return [f"{name}: cannot be used: {self.error}"]
        off = "" if self.enabled else " (off until you turn it on in /mcp)"
        if self.transport != "stdio":
            out = [f"{name}: connects to {quote(self.url or '')}{off}"]
            out += [
                f"  header {quote(k)}: {quote(v)}{self._receives(v, known_secrets)}"
                for k, v in self.headers
            ]
            return out
        where = f" {confined}" if confined else ""
        out = [f"{name}: runs{where}{off}", f"  $ {shell_line(self.argv)}"]
        if self.cwd:
            out.append(f"  in folder {quote(self.cwd)}")
        out += [
            f"  env {quote(k)}={quote(v)}{self._receives(v, known_secrets)}" for k, v in self.env
        ]
        if self.files:
            out.append("  workspace files it runs: " + ", ".join(quote(p) for p in self.files))
        if self.in_workspace and self.secrets:
            out.append(
                "  (it runs among files the agent can edit: a secret it receives can reach "
                "the agent)"
            )
        return out

    @staticmethod
    def _receives(value: str, known: Collection[str] | None) -> str:
        names = secret_names(value)
        if not names:
            return ""
        said = []
        for name in names:
            missing = known is not None and name not in known
            said.append(f"your secret {name}" + (" (not set)" if missing else ""))
        return "  ← " + ", ".join(said)


def review(name: str, spec: object, workspace: Path | None) -> Launch:
    """What server `name` of a `{"mcpServers": ...}` table would run; the workspace files
    it executes are hashed (none without a `workspace`)."""
    from ohtui.sdk.mcp.config import MCPConfigError, parse_server

    try:
        parsed = parse_server(name, spec)
    except MCPConfigError as exc:
        return Launch(name, error=str(exc).removeprefix(f"MCP server '{name}': "))
    if parsed.transport != "stdio":
        return Launch(
            name,
            parsed.transport,
            url=parsed.url,
            headers=tuple(parsed.headers.items()),
            enabled=parsed.enabled,
        )
    argv = (parsed.command or "", *parsed.args)
    files = _executed_files(argv, parsed.cwd, parsed.env, workspace) if workspace else {}
    return Launch(
        name,
        argv=argv,
        cwd=parsed.cwd,
        env=tuple(parsed.env.items()),
        enabled=parsed.enabled,
        files=files,
        in_workspace=workspace is not None,
    )


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What differs between two `{server: fingerprint}` tables, one line each."""
    out = []
    for name in after:
        if name not in before:
            out.append(f"{name}: new")
    for name in before:
        if name not in after:
            out.append(f"{name}: removed")
    for name, now in after.items():
        was = before.get(name)
        if not isinstance(was, dict) or was == now:
            continue
        for key, label in (
            ("run", "command line"),
            ("cwd", "folder"),
            ("env", "environment"),
            ("url", "URL"),
            ("headers", "headers"),
            ("transport", "transport"),
            ("error", "settings"),
        ):
            if was.get(key) != now.get(key):
                out.append(f"{name}: its {label} changed")
        if "enabled" not in was:  # trusted before ohtui kept it: said by the caller
            pass
        elif now.get("enabled") and not was.get("enabled"):
            out.append(f"{name}: now starts on its own (it was off)")
        elif was.get("enabled") and not now.get("enabled"):
            out.append(f"{name}: now off until you turn it on")
        old_files, new_files = was.get("files") or {}, now.get("files") or {}
        for path in new_files:
            if path not in old_files:
                out.append(f"{name}: now runs {quote(path)}")
            elif old_files[path] != new_files[path]:
                out.append(f"{name}: {quote(path)} changed")
        out += [f"{name}: no longer runs {quote(p)}" for p in old_files if p not in new_files]
    return out


# --- the workspace files a command line executes -------------------------------------------


def _executed_files(
    argv: tuple[str, ...], cwd: str | None, env: Mapping[str, str], workspace: Path
) -> dict[str, str]:
    """The workspace files the command executes or reads to choose what to run, hashed."""
    root = Path(os.path.realpath(workspace))
    folder = root / cwd if cwd else root
    candidates: list[Path] = []
    program = _program(argv[0], folder, env.get("PATH", os.environ.get("PATH", os.defpath)))
    if program is not None:
        candidates.append(program)
    for word in [*argv[1:], *env.values()]:
        candidates += _named_paths(word, folder)
    name = os.path.basename(argv[0])
    if _PYTHON.match(name):
        for module in _python_modules(argv[1:]):
            stem = module.replace(".", "/")
            candidates += [folder / f"{stem}.py", folder / stem / "__main__.py"]
            candidates += [folder / stem / "__init__.py"]
    if name in RUNNERS:
        candidates += [folder / manifest for manifest in MANIFESTS]
    files: dict[str, str] = {}
    for path in candidates:
        try:
            shown = _inside(path, root)
            if shown is not None and shown not in files and path.is_file():
                files[shown] = _digest(path)
        except OSError:  # a word no file can be named by (too long, not reachable)
            continue
    return files


def _program(command: str, folder: Path, search: str) -> Path | None:
    """The file `command` runs: a path (relative to the server's folder), or found on
    `search`, the PATH the server is given (its relative entries from its folder)."""
    if not command:
        return None
    if "/" in command:
        return folder / command
    entries = [str(folder / entry) for entry in search.split(os.pathsep)]
    found = shutil.which(command, path=os.pathsep.join(entries))
    return Path(found) if found else None


def _python_modules(args: tuple[str, ...]) -> list[str]:
    """The modules `python ARGS` may run: after `-m`, however it is written (`-m x`, `-mx`,
    `-Im x`); every such word counts (an extra one only hashes one more file)."""
    modules = []
    for index, word in enumerate(args):
        match = _MODULE_FLAG.fullmatch(word)
        if match is None:
            continue
        module = match.group(1) or (args[index + 1] if index + 1 < len(args) else "")
        if module and "\0" not in module:
            modules.append(module)
    return modules


def _named_paths(word: str, folder: Path) -> list[Path]:
    """The paths a word may name: itself, `--opt=VALUE`'s value, each part of a `a:b` list
    and of a space-separated value (`NODE_OPTIONS=--require ./x.js`)."""
    parts = {word}
    for piece in word.split():
        parts.add(piece)
        parts.add(piece.partition("=")[2])
        parts.update(piece.split(":"))
    return [folder / p for p in parts if p and len(p) < 4096 and "\0" not in p]


def _inside(path: Path, root: Path) -> str | None:
    """How to name `path` if it, or the file it links to, is in the workspace (else None)."""
    lexical = Path(os.path.normpath(path))
    real = Path(os.path.realpath(path))
    for candidate in (lexical, real):
        if candidate == root or root in candidate.parents:
            shown = str(candidate.relative_to(root))
            if real != lexical and candidate is lexical:
                target = str(real.relative_to(root)) if root in real.parents else str(real)
                return f"{shown} -> {target}"
            return shown
    return None


def _digest(path: Path) -> str:
    """sha256 of a regular file's content ("unreadable: why" when it cannot be read; opened
    without blocking, so a FIFO swapped in after the check cannot hang the review)."""
    hasher = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return "unreadable: not a regular file"
            for block in iter(lambda: stream.read(1 << 20), b""):
                hasher.update(block)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return hasher.hexdigest()
