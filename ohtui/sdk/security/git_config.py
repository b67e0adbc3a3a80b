"""Git configuration files read without git: which keys a file sets, and which of them an
allow rule can live with.

A repository's own configuration can make git run programs (`core.fsmonitor`, `core.pager`,
`diff.<driver>.textconv`, `filter.<driver>.clean`, `core.hooksPath` ...) or read another file
(`include.path`, `includeIf`). Rather than list those, `SAFE_KEYS` lists what is known to
change only how git behaves, never what it runs or reads: a file with any other key is not
vouched for. The parser follows git's syntax (config.c) closely enough that a file it reads
differently fails: anything it does not understand is a `GitConfigError`.
"""

from __future__ import annotations

import re

SAFE_KEYS = frozenset(
    {
        "core.repositoryformatversion",
        "core.filemode",
        "core.bare",
        "core.logallrefupdates",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.symlinks",
        "core.autocrlf",
        "core.eol",
        "core.safecrlf",
        "core.quotepath",
        "core.checkstat",
        "core.trustctime",
        "core.abbrev",
        "core.sparsecheckout",
        "core.sparsecheckoutcone",
        "remote.*.url",
        "remote.*.pushurl",
        "remote.*.fetch",
        "remote.*.push",
        "remote.*.tagopt",
        "remote.*.prune",
        "remote.*.mirror",
        "branch.*.remote",
        "branch.*.merge",
        "branch.*.rebase",
        "branch.*.pushremote",
        "branch.*.description",
        "user.name",
        "user.email",
        "init.defaultbranch",
        "pull.rebase",
        "pull.ff",
        "push.default",
        "push.autosetupremote",
        "fetch.prune",
        "extensions.objectformat",
        "extensions.worktreeconfig",
        "extensions.refstorage",
        "submodule.*.url",
        "submodule.*.active",
        "submodule.*.path",
        "submodule.*.branch",
        "gc.auto",
        "gc.autodetach",
        "lfs.repositoryformatversion",
    }
)
"""Keys (`section.key`, `section.*.key` for any subsection) that run and read nothing."""
SAFE_SECTIONS = frozenset({"color", "advice"})
"""Sections whose every key is harmless (colours, hints)."""

_SECTION = re.compile(r"[A-Za-z0-9.-]+")
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


class GitConfigError(ValueError):
    """The file is not configuration git would read the same way."""


def config_keys(text: str) -> list[str]:
    """Every key a git configuration file sets, as `section.key` or
    `section.subsection.key` (section and key lower-cased, subsection as written)."""
    parser = _Parser(text.removeprefix("\ufeff"))
    return parser.keys()


def unsafe_keys(text: str) -> list[str]:
    """The keys of a configuration file outside `SAFE_KEYS` and `SAFE_SECTIONS`; raises
    GitConfigError when it cannot be read as git reads it."""
    return [key for key in config_keys(text) if not is_safe(key)]


def is_safe(key: str) -> bool:
    """Whether `key` (as `config_keys` spells it) is known to run and read nothing."""
    section, _, rest = key.partition(".")
    if section in SAFE_SECTIONS:
        return True
    subsection, _, name = rest.rpartition(".")
    return (f"{section}.*.{name}" if subsection else key) in SAFE_KEYS


class _Parser:
    """git's config.c grammar: `[section]`, `[section "sub"]`, `[section.sub]`, `key`,
    `key = value` (quotes, escapes, backslash-newline), comments after `#` or `;`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.section: str | None = None

    def keys(self) -> list[str]:
        found: list[str] = []
        while self.at < len(self.text):
            c = self.text[self.at]
            if c in " \t\r\n":
                self.at += 1
            elif c in "#;":
                self._skip_line()
            elif c == "[":
                self.section = self._header()
            elif c.isascii() and c.isalpha():
                if self.section is None:
                    raise GitConfigError("a key before any section")
                found.append(f"{self.section}.{self._key()}")
            else:
                raise GitConfigError(f"unexpected {c!r}")
        return found

    def _skip_line(self) -> None:
        end = self.text.find("\n", self.at)
        self.at = len(self.text) if end < 0 else end + 1

    def _header(self) -> str:
        text = self.text
        match = _SECTION.match(text, self.at + 1)
        name = match.group().lower() if match else ""
        at = match.end() if match else self.at + 1
        if name and text[at : at + 1] == "]":
            self.at = at + 1
            return name  # `[a.B]` is section a, subsection b (lower-cased too)
        while text[at : at + 1] in (" ", "\t") and at < len(text):
            at += 1
        if not name or text[at : at + 1] != '"':
            raise GitConfigError(f"a bad section header near {text[self.at : at + 1]!r}")
        sub: list[str] = []
        at += 1
        while at < len(text) and text[at] not in '"\n':
            if text[at] == "\\" and at + 1 < len(text) and text[at + 1] != "\n":
                at += 1
            sub.append(text[at])
            at += 1
        if text[at : at + 2] != '"]':
            raise GitConfigError("a bad subsection name")
        self.at = at + 2
        return f"{name}.{''.join(sub)}"

    def _key(self) -> str:
        match = _KEY.match(self.text, self.at)
        if match is None:
            raise GitConfigError(f"a bad key near {self.text[self.at : self.at + 10]!r}")
        self.at = match.end()
        key = match.group().lower()
        while self.text[self.at : self.at + 1] in (" ", "\t") and self.at < len(self.text):
            self.at += 1
        rest = self.text[self.at : self.at + 2]
        if not rest or rest[:1] == "\n" or rest == "\r\n":
            return key  # a boolean: `key` alone means true
        if rest[:1] != "=":
            raise GitConfigError(f"a bad key {key!r}")
        self.at += 1
        self._value()
        return key

    def _value(self) -> None:
        """Skip a value, as git reads it: it ends at an unquoted newline or comment."""
        quoted = False
        while self.at < len(self.text):
            c = self.text[self.at]
            self.at += 1
            if c == "\n":
                if quoted:
                    raise GitConfigError("a newline inside a quoted value")
                return
            if not quoted and c in "#;":
                self._skip_line()
                return
            if c == "\\":
                if self.at >= len(self.text):
                    raise GitConfigError("a backslash at the end of the file")
                nxt = self.text[self.at]
                if nxt == "\r" and self.text[self.at + 1 : self.at + 2] == "\n":
                    self.at += 2  # git drops the CR of a CRLF continuation
                    continue
                if nxt != "\n" and nxt not in _ESCAPES:
                    raise GitConfigError(f"a bad escape \\{nxt}")
                self.at += 1
            elif c == '"':
                quoted = not quoted
        if quoted:
            raise GitConfigError("an unclosed quote")
