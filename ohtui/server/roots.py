"""The folders served conversations may work in: under one of the server's roots.

Roots come from `--root` (relative to the folder the server starts in), else `[server]
roots` in config.toml, else that folder itself. A working dir is checked by its real path
(`..`, `~` and every symbolic link resolved) and the conversation is pinned to that real
path, so a link changed afterwards moves nothing. This module imports nothing from
ohtui.sdk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SCRATCH_WORDS = "your private folders directly in"


class RootError(ValueError):
    """A root that cannot be one (missing, not a folder); the message says which."""


class OutsideRootsError(Exception):
    """The folder is outside every root (HTTP 403); the message names them."""


class WorkingDirError(ValueError):
    """The path cannot be a working dir at all (HTTP 422); the message says why."""


@dataclass(frozen=True)
class Roots:
    """The real paths of the roots, in the order given."""

    paths: tuple[Path, ...]
    private_temp: bool = False
    """Also the folders directly in the system temp dir that are this user's alone (see
    `private_temp_folder`): the default roots' scratch space, for clients that work in a
    `tempfile.mkdtemp()` folder as OpenHands examples do."""

    @classmethod
    def resolve(cls, given: Iterable[str | Path], base: Path, origin: str) -> Roots:
        """The roots `given` (relative ones from `base`, `~` expanded), each an existing
        folder; RootError naming `origin` (e.g. "--root") otherwise."""
        found: list[Path] = []
        for entry in given:
            text = str(entry)
            if "\0" in text:
                raise RootError(f"{origin} {text!r} holds a NUL character")
            path = base / Path(text).expanduser()
            real = Path(os.path.realpath(path))
            if not real.is_dir():
                what = "does not exist" if not real.exists() else "is not a folder"
                raise RootError(f"{origin} {text}: {real} {what}; give an existing folder")
            if real not in found:
                found.append(real)
        if not found:
            raise RootError(f"{origin} names no folder")
        return cls(tuple(found))

    def __str__(self) -> str:
        return ", ".join(map(str, self.paths))

    @property
    def described(self) -> str:
        """The roots, and the scratch space when it is allowed, in words."""
        if not self.private_temp:
            return str(self)
        return f"{self}, and {SCRATCH_WORDS} {_temp_dir()}"

    def contains(self, real: Path) -> bool:
        """Whether the real path `real` is a root or under one."""
        return any(real == root or real.is_relative_to(root) for root in self.paths)

    def check(self, working_dir: str) -> Path:
        """The real path of `working_dir` when it is under a root (it may not exist yet);
        WorkingDirError for a path that cannot be one, OutsideRootsError outside."""
        if "\0" in working_dir:
            raise WorkingDirError("the working_dir holds a NUL character")
        path = Path(working_dir).expanduser()
        if not path.is_absolute():
            raise WorkingDirError(
                f"the working_dir must be an absolute path (or start with ~), not '{working_dir}'"
            )
        try:
            real = Path(os.path.realpath(path))
            inside = self.contains(real) or (self.private_temp and private_temp_folder(real))
            if not inside:
                raise OutsideRootsError(self.outside(working_dir, real))
            if real.is_symlink():
                raise WorkingDirError(
                    f"the working_dir '{working_dir}' is a loop of symbolic links"
                )
            if real.exists() and not real.is_dir():
                raise WorkingDirError(f"the working_dir '{working_dir}' is not a folder")
        except OSError as exc:
            raise WorkingDirError(
                f"the working_dir '{working_dir}' cannot be used: {exc.strerror or exc}"
            ) from exc
        return real

    def outside(self, working_dir: str, real: Path) -> str:
        """The sentence for a folder outside every root."""
        shown = f"'{working_dir}'" + (f" (really {real})" if str(real) != working_dir else "")
        return (
            f"The folder {shown} is outside the folders this server lets conversations work "
            f"in ({self.described}). Work under one of them, or restart ohtui serve with "
            "--root for that folder (or set roots in the [server] table of config.toml)."
        )


def _temp_dir() -> Path:
    import tempfile

    return Path(os.path.realpath(tempfile.gettempdir()))


def private_temp_folder(real: Path) -> bool:
    """Whether the real path `real` is a folder directly in the system temp dir that
    belongs to this user and that no one else may enter (as `mkdtemp` makes them). Only
    such a folder itself, not one below it: a private folder there may hold other
    programs' folders (pytest's, a tool's cache). A missing one is made so (mode 0700) and
    then checked: a name another user took first, or a link planted there, is refused."""
    temp = _temp_dir()
    if real.parent != temp:
        return False
    try:
        if not os.path.lexists(real):
            os.mkdir(real, 0o700)
        info = os.lstat(real)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077
