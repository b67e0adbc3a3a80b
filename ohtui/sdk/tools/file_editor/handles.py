"""Opening the editor's files so that no link, hard link or race can take a read or a write
out of bounds.

A path checked by its name and then opened by its name leaves a gap: a link swapped in
between (for the file or for any folder above it) sends the open elsewhere. So the editor
opens first and checks what it opened:

- What a path names is opened with O_PATH, which follows links but opens nothing (no device
  is touched, no pipe waited on). Its real location is read back from /proc/self/fd and
  confirmed by walking to that location again without following any link, to the same file.
  The boundary checks that location, the location is confirmed once more, and only then is
  the file opened to read or write, through the descriptor itself (/proc/self/fd/N): the file
  written is the file checked.
- A new file is made in its folder's descriptor, once the folder's location is checked, with
  O_CREAT|O_EXCL|O_NOFOLLOW; missing folders are made one at a time the same way. The new
  file must be where its folder was checked to be before anything is written to it; an edit
  must find the file still where it was checked before it writes.
- A file with several names (hard links) is never written: its other names may be anywhere.

Linux only: where /proc/self/fd cannot say where a file is, the editor refuses the file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ohtui.sdk.tools.file_editor.fileio import (
    FileEditorError,
    check_mode,
    explained,
    missing_path_message,
    read_all,
    write_all,
)

_LOOK = os.O_PATH | os.O_CLOEXEC
_FOLDER = _LOOK | os.O_DIRECTORY
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC


class Boundary(Protocol):
    """What the agent's tools may read and write (the conversation's Sandbox)."""

    def check_read(self, path: str) -> str | None:
        """Why `path` may not be read; None when it may."""
        ...

    def check_write(self, path: str) -> str | None:
        """Why `path` may not be written; None when it may."""
        ...


class OutOfBoundsError(FileEditorError):
    """The boundary refuses what a path really names; the message is the boundary's reason."""


@dataclass
class Opened:
    """What a path named when it was opened (an O_PATH descriptor), checked against the
    boundary where it really is."""

    fd: int
    path: Path
    """The path as asked for, for messages."""
    status: os.stat_result
    location: str
    """Where it really is: an absolute path without links."""
    boundary: Boundary | None

    @property
    def is_folder(self) -> bool:
        """Whether it is a folder (a directory)."""
        return stat.S_ISDIR(self.status.st_mode)

    def read(self) -> bytes:
        """The file's bytes (at most the editor's limit)."""
        fd = self._reopen(os.O_RDONLY)
        try:
            return read_all(fd, self.path)
        finally:
            os.close(fd)

    def write(self, data: bytes) -> None:
        """Make `data` the file's content, in place, once it is confirmed to be still where it
        was checked, with one name."""
        if _where(self.fd, self.path) != self.location:
            raise _changed(self.path)
        _single(self.path, os.fstat(self.fd).st_nlink)
        fd = self._reopen(os.O_WRONLY)
        try:
            os.ftruncate(fd, 0)
            write_all(fd, data)
        finally:
            os.close(fd)

    @contextmanager
    def listing(self) -> Iterator[int]:
        """The folder, open for listing its entries."""
        fd = self._reopen(os.O_RDONLY | os.O_DIRECTORY)
        try:
            yield fd
        finally:
            os.close(fd)

    def subfolder(self, parent: int, name: str) -> int | None:
        """The folder `name` in the folder open as `parent`, open for listing, where the
        boundary lets it be read; None where it may not be, or is no longer a folder (the
        caller closes it)."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        except OSError:
            return None
        try:
            _checked(fd, self.path / name, self.boundary, read=True)
        except FileEditorError:
            os.close(fd)
            return None
        return fd

    def _reopen(self, flags: int) -> int:
        """The same file opened anew with `flags`: through the descriptor, not the name."""
        fd = os.open(f"/proc/self/fd/{self.fd}", flags | os.O_NOCTTY | os.O_CLOEXEC)
        if not _same(os.fstat(fd), self.status):
            os.close(fd)
            raise _changed(self.path)
        return fd


@contextmanager
def opened(path: Path, boundary: Boundary | None, *, write: bool = False) -> Iterator[Opened]:
    """What `path` names, links followed: a regular file (or, when not writing, a folder),
    inside the boundary for reading (and writing), with one name only when writing."""
    with explained(path):
        fd = os.open(path, _LOOK)
    try:
        status = os.fstat(fd)
        if write or not stat.S_ISDIR(status.st_mode):
            check_mode(path, status.st_mode)  # devices and pipes are refused unopened
        location = _checked(fd, path, boundary, read=True, write=write)
        if write:
            _single(path, status.st_nlink)
        yield Opened(fd, path, status, location, boundary)
    finally:
        os.close(fd)


def create(path: Path, data: bytes, boundary: Boundary | None, *, parents: bool) -> None:
    """Write `data` to the new file `path` (FileExistsError if anything is there, even a
    link), making its missing folders first if `parents`."""
    with _folder(path.parent, boundary, make=parents) as (folder, location):
        checked = _check_name(folder, location, path.name, path, boundary)
        fd = os.open(path.name, _CREATE, 0o666, dir_fd=folder)
        try:
            made = os.fstat(fd)
            try:  # the folder itself may have been moved since it was checked
                moved = _where(fd, path) != checked
            except FileEditorError:
                moved = True
            if moved:
                _unlink_if(folder, path.name, made)
                raise _changed(path)
            write_all(fd, data)
        finally:
            os.close(fd)


def remove(path: Path, boundary: Boundary | None) -> None:
    """Delete the name `path` from its folder, where the boundary lets the folder be written."""
    with _folder(path.parent, boundary, make=False) as (folder, location):
        _check_name(folder, location, path.name, path, boundary)
        os.unlink(path.name, dir_fd=folder)


@contextmanager
def _folder(directory: Path, boundary: Boundary | None, *, make: bool) -> Iterator[tuple[int, str]]:
    """The folder `directory` (links followed) as a descriptor and its real location; its
    missing folders made first, each inside the boundary, if `make`."""
    missing: list[str] = []
    existing = directory
    while True:
        try:
            fd = os.open(existing, _FOLDER)
            break
        except FileNotFoundError:
            if not make or existing.parent == existing:
                raise
            missing.append(existing.name)
            existing = existing.parent
    try:
        location = _where(fd, existing)
        for name in reversed(missing):
            _check_name(fd, location, name, existing / name, boundary)
            with suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            existing = existing / name
            try:
                child = os.open(name, _FOLDER | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                if os.path.islink(existing):
                    raise FileEditorError(missing_path_message(existing)) from None
                raise _changed(existing) from None
            os.close(fd)
            fd = child
            location = _where(fd, existing)
        yield fd, location
    finally:
        os.close(fd)


def _check_name(
    folder: int, location: str, name: str, path: Path, boundary: Boundary | None
) -> str:
    """Where `name` in the folder open as `folder` (at `location`) is, checked to be
    writable."""
    checked = os.path.join(location, name)
    _check(boundary, checked, path, write=True)
    if _where(folder, path.parent) != location:
        raise _changed(path)
    return checked


def _checked(
    fd: int, path: Path, boundary: Boundary | None, *, read: bool = False, write: bool = False
) -> str:
    """Where the file open as `fd` really is, checked against the boundary."""
    location = _where(fd, path)
    _check(boundary, location, path, read=read, write=write)
    # The boundary resolves the location by name: it must still name this file, with no link.
    if _where(fd, path) != location:
        raise _changed(path)
    return location


def _check(
    boundary: Boundary | None,
    location: str,
    path: Path,
    *,
    read: bool = False,
    write: bool = False,
) -> None:
    if boundary is None:
        return
    try:
        problem = (read and boundary.check_read(location)) or (
            write and boundary.check_write(location)
        )
    except OSError:  # a link on the way changed while the boundary resolved it
        raise _changed(path) from None
    if problem:
        raise OutOfBoundsError(problem)


def _where(fd: int, path: Path) -> str:
    """The real location of what `fd` holds open (`path`): an absolute path without links,
    confirmed to lead to the same file."""
    try:
        location = os.readlink(f"/proc/self/fd/{fd}")
    except OSError as exc:
        raise FileEditorError(
            f"The editor cannot tell where {path} really is ({exc.strerror}: it reads that "
            "from /proc/self/fd), so it does not touch it. Nothing was changed. Use the "
            "terminal instead."
        ) from None
    # A deleted file reads "PATH (deleted)", one outside this process's root has no leading
    # "/": neither leads back to the file.
    if not location.startswith("/") or not _leads_to(location, os.fstat(fd)):
        raise _changed(path)
    return location


def _leads_to(location: str, status: os.stat_result) -> bool:
    """Whether walking to `location` from `/`, following no link at all, reaches the file
    whose status is `status`."""
    try:
        fd = os.open("/", _FOLDER)
    except OSError:
        return False
    try:
        for part in location.split("/"):
            if part:
                # A link opened with O_NOFOLLOW is the link itself: the next step fails
                # (it is not a folder) and the last compares unequal.
                step = os.open(part, _LOOK | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = step
        return _same(os.fstat(fd), status)
    except OSError:
        return False
    finally:
        os.close(fd)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _single(path: Path, names: int) -> None:
    """Refuse to write a file with more than one name (hard link)."""
    if names > 1:
        raise FileEditorError(
            f"{path} has {names} names (hard links): the same file is reachable under other "
            "names, which may be outside the workspace, and an edit here would change it "
            "there too. The editor does not write a file with several names. Nothing was "
            "changed. To edit this one on its own, give it its own copy with the terminal "
            "first (`cp -p FILE FILE.copy && mv FILE.copy FILE`), then edit it."
        )


def _unlink_if(folder: int, name: str, made: os.stat_result) -> None:
    """Remove `name` from `folder` if it is still the file `made`."""
    with suppress(OSError):
        if _same(os.stat(name, dir_fd=folder, follow_symlinks=False), made):
            os.unlink(name, dir_fd=folder)


def _changed(path: Path) -> FileEditorError:
    return FileEditorError(
        f"{path} changed while the editor was opening it: a link or folder on the way was "
        "replaced, moved or deleted. Nothing was changed. Try again; if it keeps happening, "
        "something is changing these files (a command still running in the background?)."
    )
