"""FileIndex: a workspace's paths, walked off the UI thread, matched in O(log n) per key."""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

MAX_MATCHES = 20
INDEX_LIMIT = 20_000
SKIPPED_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        "dist",
        "build",
    }
)


class FileIndex:
    """A workspace's relative paths (directories end with `/`), searchable by prefix in O(log n)."""

    def __init__(self, paths: Sequence[str], built_at: float) -> None:
        self.paths = list(paths)
        """Paths in walk order: shallow ones first."""
        self.built_at = built_at
        """`time.monotonic()` when the walk finished."""
        self._lower = [path.lower() for path in self.paths]
        by_path = sorted(range(len(self._lower)), key=self._lower.__getitem__)
        self._path_keys = [self._lower[i] for i in by_path]
        self._path_order = by_path
        by_name = sorted((_basename(lower), i) for i, lower in enumerate(self._lower))
        self._name_keys = [name for name, _ in by_name]
        self._name_order = [i for _, i in by_name]

    def quick_matches(self, fragment: str, limit: int = MAX_MATCHES) -> list[str]:
        """Paths whose relative path, then whose basename, starts with `fragment` (any case)."""
        needle = fragment.lower()
        if not needle:
            return self.paths[:limit]
        chosen: dict[int, None] = {}
        for keys, order in (
            (self._path_keys, self._path_order),
            (self._name_keys, self._name_order),
        ):
            for i in _prefixed(keys, order, needle):
                if len(chosen) >= limit:
                    break
                if self._offerable(i, needle):
                    chosen[i] = None
        return [self.paths[i] for i in chosen]

    def substring_matches(
        self,
        fragment: str,
        exclude: Sequence[str],
        limit: int,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> list[str]:
        """Paths containing `fragment` (any case), except `exclude`, in walk order: O(n)."""
        needle = fragment.lower()
        skip = set(exclude)
        found: list[str] = []
        for i, lower in enumerate(self._lower):
            if len(found) >= limit or (i % 1024 == 0 and should_stop()):
                break
            if needle in lower and self._offerable(i, needle) and self.paths[i] not in skip:
                found.append(self.paths[i])
        return found

    def _offerable(self, i: int, needle: str) -> bool:
        # The directory already typed in full is not a useful completion of itself.
        return not (self._lower[i] == needle and needle.endswith("/"))


def _basename(lower_path: str) -> str:
    return lower_path.rstrip("/").rsplit("/", 1)[-1]


def _prefixed(keys: list[str], order: list[int], needle: str) -> Iterator[int]:
    """Indexes (into the index's paths) of the sorted `keys` that start with `needle`."""
    position = bisect_left(keys, needle)
    while position < len(keys) and keys[position].startswith(needle):
        yield order[position]
        position += 1


def index_workspace(
    root: Path,
    limit: int = INDEX_LIMIT,
    should_stop: Callable[[], bool] = lambda: False,
) -> FileIndex:
    """Walk `root` breadth first (blocking I/O), skipping hidden entries, build or tool dirs
    and what `.gitignore` files (nested ones and the repository's exclude file too) ignore."""
    from ohtui.tui.ignore_rules import IgnoreRules  # pathspec: off the first frame

    paths: list[str] = []
    pending: deque[tuple[str, str, IgnoreRules]] = deque(
        [(str(root), "", IgnoreRules.at_top(root))]
    )
    while pending and len(paths) < limit and not should_stop():
        directory, prefix, outer = pending.popleft()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue  # unreadable directory: offer what we can read
        rules = outer.entering(directory, prefix)
        listed: list[tuple[str, str, bool]] = []  # (name, path, descend)
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIPPED_DIRS:
                continue
            try:
                is_dir = entry.is_dir()
                descend = is_dir and not entry.is_symlink()  # links could loop
            except OSError:
                is_dir = descend = False
            listed.append((f"{entry.name}/" if is_dir else entry.name, entry.path, descend))
        check = rules.may_ignore(prefix, [name for name, _, _ in listed])
        for name, path, descend in listed:
            relative = f"{prefix}{name}"
            if check and rules.ignores(relative, name):
                continue
            paths.append(relative)
            if descend:
                pending.append((path, relative, rules))
            if len(paths) >= limit:
                break
    return FileIndex(paths, time.monotonic())
