"""IgnoreRules: the `.gitignore` rules in force in a folder of a workspace, as git reads them.

Every `.gitignore` in the workspace counts for its folder and those below (a deeper file
wins, the last matching pattern of a file wins, `!` takes a path back), and so does
`.git/info/exclude` when the workspace is a repository's top. A folder outside any git
repository still honours its `.gitignore` files: they say what the user does not want
offered, git or not. Rules of folders above the workspace do not count: a home folder kept
in git often ignores everything (`*`), and a workspace opened inside it is still wanted.
Patterns are read by `pathspec`, whose GitIgnoreSpec follows git's own rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import re2
from pathspec import GitIgnoreSpec, RegexPattern

from ohtui.small_file import read_small

IGNORE_FILE = ".gitignore"
MAX_RULES_FILE = 1 << 20
"""A rules file larger than this (1 MiB) is left unread: it adds no rule."""


Finder = Callable[[str], object]
"""`match` or `search` of an expression: None where no pattern can match."""


class Listing(Protocol):
    """An expression searched for in names or paths one a line."""

    def search(self, text: str) -> object:
        """Where it matches (None: nowhere)."""
        ...


ENGINE = "re2"
"""Every expression a rules file makes is matched by RE2, in time linear in the path: a
pattern such as `**/z*z*z*z*z*z*z*q` would otherwise backtrack for seconds on one long
name (Python's `re`), in a file anyone may put in the workspace."""


@dataclass(frozen=True)
class _Layer:
    """One file's patterns, and where in the workspace that file lives."""

    spec: GitIgnoreSpec
    strip: int
    """Characters to drop from the front of a workspace path: the folder's own prefix."""
    any_level: tuple[str, ...]
    """Expressions of the patterns that apply at any level (no `/` but a trailing one),
    for the start of the last part of a path: its folders were checked on the way down, so
    such a pattern can newly match only its last part."""
    endings: tuple[str, ...]
    """The same for the patterns starting with `*` (e.g. `*.log`), less that `*`: found
    anywhere in the last part (many such expressions, searched at once, cost one scan)."""
    anchored: Finder | None
    """Finds where one of the other patterns may match the path (None: there are none)."""
    anchored_listing: Listing | None
    """Finds, in a folder's paths one a line, where one of those patterns may match."""

    def path(self, relative: str) -> str:
        """The workspace path `relative` as this file's patterns read it."""
        return relative[self.strip :]

    def verdict(self, relative: str) -> bool | None:
        """True ignored, False taken back by a `!` pattern, None when no pattern matches."""
        return self.spec.check_file(self.path(relative)).include


@dataclass(frozen=True)
class IgnoreRules:
    """The layers in force in one folder, deepest last; immutable, shared by subfolders."""

    layers: tuple[_Layer, ...] = ()
    any_name: Finder | None = None
    """Finds where a pattern of any layer that applies at any level may match a last part."""
    any_ending: Finder | None = None
    """Finds where such a pattern starting with `*` may match a last part."""
    anchored: tuple[_Layer, ...] = ()
    """The layers with patterns that do not apply at any level."""
    names_listing: Listing | None = None
    """Finds, in a folder's entry names one a line, where a pattern that applies at any
    level may match the start of one of them."""
    endings_listing: Listing | None = None
    """The same for the patterns starting with `*`, anywhere in a name."""

    @classmethod
    def at_top(cls, root: Path) -> IgnoreRules:
        """The rules at the top of `root` from outside it: its `.git/info/exclude` when it
        is a repository's top (`entering` adds its own `.gitignore`)."""
        return cls()._with(_git_dir(root) / "info" / "exclude", strip=0)

    def entering(self, directory: str, prefix: str) -> IgnoreRules:
        """The rules inside `directory` (workspace path `prefix`, ending with `/` or empty):
        these, plus its own `.gitignore` if it has one."""
        return self._with(Path(directory, IGNORE_FILE), strip=len(prefix))

    def may_ignore(self, prefix: str, names: list[str]) -> bool:
        """Whether a pattern may match one of the entries `names` of the folder at
        workspace path `prefix`: a search or two over all of them at C speed, so a folder
        that nothing ignores costs little more than it did without rules."""
        if not self.layers:
            return False
        listing = "\n".join(names)
        for names_listing in (self.names_listing, self.endings_listing):
            if names_listing is not None and names_listing.search(listing):
                return True
        for layer in self.anchored:
            base = prefix[layer.strip :]
            paths = "\n".join(base + name for name in names) if base else listing
            if layer.anchored_listing is not None and layer.anchored_listing.search(paths):
                return True
        return False

    def ignores(self, relative: str, name: str) -> bool:
        """Whether the workspace path `relative`, whose last part is `name`, is ignored (a
        folder's both end with `/`)."""
        if (self.any_name is None or self.any_name(name) is None) and (
            self.any_ending is None or self.any_ending(name) is None
        ):
            for layer in self.anchored:
                if layer.anchored is not None and layer.anchored(layer.path(relative)):
                    break
            else:
                return False  # most paths: no pattern matches, told at C speed
        for layer in reversed(self.layers):
            verdict = layer.verdict(relative)
            if verdict is not None:
                return verdict
        return False

    def _with(self, path: Path, *, strip: int) -> IgnoreRules:
        """These rules, plus the patterns in the file at `path` if it can be read."""
        try:
            raw = read_small(path, MAX_RULES_FILE, follow=False)
        except OSError:
            return self  # none, a link, no regular file (a FIFO), too large: no rule
        lines = raw.decode("utf-8", errors="replace").splitlines()
        spec = GitIgnoreSpec.from_lines(lines, backend=ENGINE)
        if not any(pattern.include is not None for pattern in spec.patterns):
            return self  # comments and blank lines only
        layers = (*self.layers, _layer(spec, strip))
        names = [source for layer in layers for source in layer.any_level]
        endings = [source for layer in layers for source in layer.endings]
        anchored = tuple(layer for layer in layers if layer.anchored is not None)
        starts = _listing([source.removeprefix("^") for source in names], at_line_start=True)
        return IgnoreRules(
            layers,
            _finder(names),
            _finder(endings),
            anchored,
            starts,
            _listing(endings),
        )


_ANY_LEVEL = "^(?:.+/)?"
"""How pathspec's expression for a pattern without a `/` (but a trailing one) begins."""
_ANY_START = "[^/]*"
"""How pathspec's expression for a leading `*` begins."""
_ANYTHING = ".*"


def _layer(spec: GitIgnoreSpec, strip: int) -> _Layer:
    """`spec` as a layer, with the expressions that tell at C speed which paths no pattern
    matches (group names dropped: they repeat)."""
    any_level: list[str] = []
    endings: list[str] = []
    others: list[str] = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue
        if not isinstance(pattern, RegexPattern) or pattern.regex is None:
            others.append(_ANYTHING)  # not an expression: every path is asked about
            continue
        source = re.sub(r"[(][?]P<[^>]+>", "(?:", pattern.regex.pattern)
        if source.startswith(_ANY_LEVEL + _ANY_START):
            endings.append(source.removeprefix(_ANY_LEVEL + _ANY_START))
        elif source.startswith(_ANY_LEVEL):
            any_level.append("^" + source.removeprefix(_ANY_LEVEL))
        else:
            others.append(source)
    if all(source.startswith("^") for source in others):
        listing = _listing([source[1:] for source in others], at_line_start=True)
    else:
        listing = _listing(others)
    return _Layer(spec, strip, tuple(any_level), tuple(endings), _finder(others), listing)


def _finder(sources: list[str]) -> Finder | None:
    """Finds where any of `sources` matches: one expression, anchored at the start when
    each of them is; None for no sources."""
    if not sources:
        return None
    anchored = all(source.startswith("^") for source in sources)
    joined = "|".join(
        f"(?:{source.removeprefix('^') if anchored else source})" for source in sources
    )
    try:
        expression = re2.compile(joined)
    except re2.error:
        expression = re2.compile(_ANYTHING)  # every path is asked about
    return expression.match if anchored else expression.search


def _listing(sources: list[str], *, at_line_start: bool = False) -> Listing | None:
    """One expression finding, in names or paths one a line, where any of `sources` (at
    the start of a line, with `at_line_start`) may match one of them (`^` and `$` at each
    line; a match running over two lines only asks about more); None for no sources."""
    if not sources:
        return None
    if any("\\A" in source or "\\Z" in source for source in sources):
        return re2.compile("")  # they would miss a line in the middle: ask about every one
    try:
        joined = "|".join(f"(?:{source})" for source in sources)
        return re2.compile(f"(?m)^(?:{joined})" if at_line_start else f"(?m){joined}")
    except re2.error:
        return re2.compile("")


def _git_dir(top: Path) -> Path:
    """The repository's own git folder: `.git`, or for a linked worktree (whose `.git` is a
    file naming its folder) the folder its worktrees share, where `info/exclude` lives."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        pointer = read_small(dot_git, MAX_RULES_FILE).decode("utf-8", errors="replace").strip()
    except OSError:
        return dot_git
    if not pointer.startswith("gitdir:"):
        return dot_git
    git_dir = (top / pointer.removeprefix("gitdir:").strip()).resolve()
    try:
        common = read_small(git_dir / "commondir", MAX_RULES_FILE).decode(errors="replace")
    except OSError:
        return git_dir
    common = common.strip()
    return (git_dir / common).resolve()
