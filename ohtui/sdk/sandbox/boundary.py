"""The sandbox for one conversation: its configuration bound to real paths, and the checks the
agent's own tools (the file editor, the task tracker) make against the same boundary."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ohtui.sdk.sandbox.config import SandboxConfig, SandboxMode
from ohtui.sdk.sandbox.launch import Launch, within

SETUP_TRIES = 3
"""Starts of a program whose sandbox did not set up before its failure is reported: what the
sandbox covers is listed just before it starts, and a path gone in between (another
program's socket removed) fails that one start."""


@dataclass(frozen=True)
class Sandbox:
    """The sandbox for one conversation: its configuration bound to real paths."""

    config: SandboxConfig
    workspace: str
    extra_writable: tuple[str, ...] = ()
    """The conversation's own directory (saved outputs), besides the configured paths."""
    extra_hidden: tuple[str, ...] = ()
    """Besides the configured paths: where every conversation is stored."""
    private: tuple[str, ...] = ()
    """The application's own files (settings, saved conversations, history, logs, keys):
    hidden from commands and refused to the agent's tools in every mode, the sandbox off too.
    The conversation's own directory (`extra_writable`) and `protected` paths inside them
    stay reachable."""
    protected: tuple[str, ...] = ()
    """The application's files the agent may read but never change, in every mode (the
    user's skills, fetched plugins)."""
    home: str = field(default_factory=lambda: os.path.expanduser("~"))

    @property
    def active(self) -> bool:
        """Whether commands are confined at all."""
        return self.config.mode is not SandboxMode.OFF

    @property
    def writable(self) -> tuple[str, ...]:
        """Every path commands may write (none in read-only mode, everything when off)."""
        if self.config.mode is not SandboxMode.WORKSPACE_WRITE:
            return ()
        paths = [self.workspace, *self.extra_writable, *self.config.writable]
        return tuple(dict.fromkeys(self.real(p) for p in paths))

    @property
    def hidden(self) -> tuple[str, ...]:
        """Every path hidden from commands: the configured ones, the conversations' store and
        the application's private files."""
        paths = [*self.config.hidden, *self.extra_hidden, *self.private]
        return tuple(dict.fromkeys(self.real(p) for p in paths))

    @property
    def opted_writable(self) -> tuple[str, ...]:
        """The paths the user made writable by name (config), which no protection overrides."""
        return tuple(self.real(p) for p in self.config.writable)

    def layout(self) -> tuple[tuple[int, int] | None, ...]:
        """What the mounts of a started command were made from and can change under it: the
        identity of the workspace's `.git` and of each hidden path (None: missing). A path
        made after the start, or removed and made again, is not covered in that command's
        view; one started after a change is (the agent's shell is started again)."""
        paths = [os.path.join(self.workspace, ".git"), *self.hidden]
        return tuple(_identity(path) for path in paths)

    def launch(self, argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> Launch:
        """How to run `argv` inside bubblewrap (as it is when the sandbox is off); `environ`:
        the environment it would get, where sockets are named."""
        if not self.active:
            return Launch(list(argv))
        from ohtui.sdk.sandbox.bwrap import bwrap_launch

        return bwrap_launch(self, argv, environ)

    def check(self, argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> str | None:
        """Start `argv` (the agent's shell, exactly as it will be started) in this sandbox and
        end it: None when it started, else why it cannot, in words (SETUP_TRIES tries)."""
        if not self.active:
            return None
        from ohtui.sdk.sandbox.availability import start_problem

        problem = None
        for _ in range(SETUP_TRIES):
            launch = self.launch(argv, environ)
            problem = start_problem(launch.argv, launch.environment(environ), launch.before_exec)
            if problem is None:
                return None
        return problem

    def unconfined(self) -> Sandbox:
        """The same boundary with the sandbox's own limits lifted, for one action the user
        approved to run outside it: ohtui's own files (settings, saved conversations, keys)
        stay out of reach, in every mode."""
        from ohtui.sdk.sandbox.config import SandboxMode

        return replace(self, config=self.config.model_copy(update={"mode": SandboxMode.OFF}))

    def check_write(self, path: str) -> str | None:
        """Why `path` may not be written by the agent's tools; None when it may."""
        real, unresolved = self._resolve(path)
        if unresolved:
            return unresolved
        own = self._own_file(real, writing=True)
        if own:
            return own
        if not self.active:
            return None
        hidden = within(real, self.hidden)
        if hidden:
            return f"{path} is hidden by the sandbox ({hidden})"
        if self.config.mode is SandboxMode.READ_ONLY:
            return f"the sandbox is read-only: nothing may be written, {path} included"
        if not within(real, self.writable):
            return (
                f"{path} is outside the sandbox: only the workspace ({self.workspace})"
                + (" and " + ", ".join(self.writable[1:]) if len(self.writable) > 1 else "")
                + " may be written"
            )
        from ohtui.sdk.sandbox.git import protected_for_write

        if not within(real, self.opted_writable):
            repository = protected_for_write(self.workspace, real)
            if repository:
                return (
                    f"{path} is part of the repository's git configuration or hooks "
                    f"({repository}), which the sandbox keeps read-only: git would run what "
                    "is written there outside the sandbox"
                )
        return None

    def check_read(self, path: str) -> str | None:
        """Why `path` may not be read by the agent's tools; None when it may."""
        real, unresolved = self._resolve(path)
        if unresolved:
            return unresolved
        own = self._own_file(real, writing=False)
        if own:
            return own
        if not self.active or within(real, tuple(self.real(p) for p in self.protected)):
            return None
        hidden = within(real, self.hidden)
        return f"{path} is hidden by the sandbox ({hidden})" if hidden else None

    def _resolve(self, path: str) -> tuple[str, str | None]:
        """(`path` resolved, None), or ("", why not): a name the system refuses."""
        try:
            return self.real(path), None
        except OSError as exc:
            return "", f"{path} could not be resolved ({exc.strerror or exc})"
        except ValueError:
            return "", f"{path!r} is not a valid path (it holds a NUL character)"

    def _own_file(self, real: str, *, writing: bool) -> str | None:
        """Why the application's own files refuse this access, if they do."""
        if within(real, tuple(self.real(p) for p in self.extra_writable)):
            return None
        protected = within(real, tuple(self.real(p) for p in self.protected))
        private = within(real, tuple(self.real(p) for p in self.private))
        if (private and not protected) or (writing and protected):
            return (
                f"{real} belongs to the application running the agent ({private or protected}: "
                "its settings, saved conversations, logs or keys); the agent's tools never "
                + ("change" if writing else "read")
                + " it, in any sandbox mode"
            )
        return None

    def real(self, path: str) -> str:
        """`path` ('~' expanded, relative to the workspace) with every link resolved."""
        expanded = self.home + path[1:] if path == "~" or path.startswith("~/") else path
        return os.path.realpath(os.path.join(self.workspace, expanded))


def _identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of `path` itself, or None when it is missing."""
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino
