"""The user's trust in each plugin: what it runs, reviewed once per version.

A plugin's hooks run commands on every matching event and its MCP servers start with the
conversation, so a plugin is used only once the user has seen what it runs (hook commands,
MCP servers with their command line, environment and the secrets they receive) and trusted
it. Trust is kept per plugin (its source) for one version: a digest of every file in its
folder, so a new commit, an edited hook script or a changed .mcp.json asks again and says
what changed. Its command hooks run in the conversation's sandbox; its MCP servers run as
the user's own.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.settings.mcp_trust import TrustStore
from ohtui.settings.run_review import quote, review
from ohtui.terminal_text import shell_quoted

if TYPE_CHECKING:
    from ohtui.sdk.plugins import Plugin, PluginCheck

SKIPPED_DIRS = frozenset({".git"})
"""Folders of a plugin left out of its digest (git's own data)."""


class PluginTrustError(Exception):
    """Plugins the user has not trusted (as they are now); the message says what they would
    run and how to trust them."""


@dataclass(frozen=True)
class PluginReview:
    """One plugin as the user reviews it before trusting it."""

    plugin: Plugin
    key: str
    digest: str
    runs: list[str]
    """What it runs, one line each (hooks, MCP servers), its folder written as
    ${CLAUDE_PLUGIN_ROOT} (a new commit of a git plugin lives in another folder)."""
    text: str
    """Everything it brings, for the user to read."""
    changed: list[str] = field(default_factory=list)
    """What changed since the user trusted it ([] the first time)."""

    @property
    def title(self) -> str:
        """`name version`, as the user knows it."""
        return " ".join(shell_quoted(p) for p in (self.plugin.name, self.plugin.version) if p)

    def fingerprint(self) -> dict[str, Any]:
        """What trusting it agrees to, as it is kept (to say what changed next time)."""
        return {"version": self.plugin.version, "commit": self.plugin.commit, "runs": self.runs}


def plugin_key(plugin: Plugin) -> str:
    """The key a plugin's trust is kept under: its source (its folder, for a local one)."""
    return plugin.source or str(plugin.path)


def folder_digest(root: Path) -> str:
    """sha256 over every entry of a folder, in order: its path, then a link's target as
    its text (and a linked file's content), a regular file's content, or what else it is (a
    FIFO, a socket: never opened, so nothing waits on it). A linked folder counts by where
    it points, not by what it holds."""
    hasher = hashlib.sha256()
    for directory, folders, files in os.walk(root, followlinks=False):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_DIRS)
        linked = [f for f in folders if (Path(directory) / f).is_symlink()]
        for name in sorted([*files, *linked]):
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            hasher.update(f"\0{relative}\0".encode(errors="surrogateescape"))
            follow = False
            if path.is_symlink():
                hasher.update(f"-> {os.readlink(path)}\0".encode(errors="surrogateescape"))
                follow = True
            _hash_content(path, hasher, follow)
    return hasher.hexdigest()


def _hash_content(path: Path, hasher: Any, follow: bool) -> None:
    """Add a regular file's content (a link's, with `follow`); a FIFO or device is opened
    without blocking and never read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow:  # a link to nothing, or a folder, says so by its target alone
            hasher.update(f"unreadable: {exc.strerror}".encode())
        return
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if not stat.S_ISDIR(mode):
            hasher.update(f"not a file: {stat.S_IFMT(mode):o}".encode())
        return
    with os.fdopen(fd, "rb") as stream:
        try:
            for block in iter(lambda: stream.read(1 << 20), b""):
                hasher.update(block)
        except OSError as exc:
            hasher.update(f"unreadable: {exc.strerror}".encode())


def review_plugin(
    plugin: Plugin,
    store: TrustStore,
    known_secrets: Collection[str] | None = None,
    hooks_confined: str = "",
) -> PluginReview:
    """What `plugin` brings and runs, and what changed since the user trusted it.

    `hooks_confined`: where its command hooks run ("in the sandbox (...)").
    """
    runs: list[str] = []
    lines = [f"From {quote(plugin.source or str(plugin.path))}"]
    if plugin.commit:
        lines[0] += f" at commit {plugin.commit[:12]}"
    if plugin.description and plugin.description.strip():
        lines.append(shell_quoted(plugin.description.strip().splitlines()[0]))
    hooks = _hook_lines(plugin)
    if hooks:
        where = f", {hooks_confined}" if hooks_confined else ""
        lines += ["", f"Hooks, run on the agent's events{where}:", *hooks]
        runs += [_rootless(line, plugin.path) for line in hooks]
    if plugin.mcp_config:
        lines += ["", "MCP servers, started with every conversation, outside the sandbox:"]
        for name, spec in plugin.mcp_config.items():
            launch = review(name, spec, None)
            lines += [f"  {line}" for line in launch.lines(known_secrets)]
            runs += [_rootless(line, plugin.path) for line in launch.lines()]
    if plugin.skills:
        names = ", ".join(quote(skill.name) for skill in plugin.skills)
        lines += ["", f"Skills (instructions the agent may read): {names}"]
    key = plugin_key(plugin)
    before = store.trusted_fingerprint(key)
    changed = _changes(before, plugin, runs) if before is not None else []
    digest = folder_digest(plugin.path)
    if before is not None and not changed and not store.is_trusted(key, digest):
        changed = ["its files changed (what it runs did not)"]
    return PluginReview(plugin, key, digest, runs, "\n".join(lines), changed)


def untrusted(reviews: list[PluginReview], store: TrustStore) -> list[PluginReview]:
    """The plugins the user has not trusted as they are now."""
    return [r for r in reviews if not store.is_trusted(r.key, r.digest)]


def trust_plugin(reviewed: PluginReview, store: TrustStore) -> None:
    """Remember that the user trusts this version of the plugin."""
    store.trust(reviewed.key, reviewed.digest, reviewed.fingerprint())


def refusal(reviews: list[PluginReview]) -> str:
    """Why a run without a user to ask cannot use these plugins, and how to trust them."""
    lines = []
    for reviewed in reviews:
        state = "changed since you trusted it" if reviewed.changed else "not trusted"
        source = reviewed.plugin.source or str(reviewed.plugin.path)
        lines.append(f"plugin {reviewed.title} ({quote(source)}) is {state}.")
        lines += [f"  {line}" for line in reviewed.changed]
        lines.append("It would run:" if reviewed.runs else "It runs nothing.")
        lines += [f"  {line.strip()}" for line in reviewed.runs]
    lines.append(
        "Review and trust it with `ohtui trust` (or by opening ohtui in this workspace), or "
        "remove it from the plugins list of the [agent] table of config.toml."
    )
    return "\n".join(lines)


def refuse_untrusted(store: TrustStore) -> Callable[[list[Plugin]], list[Plugin]]:
    """A plugin check for runs with no user to ask: every plugin trusted as it is, or a
    PluginTrustError saying what the others would run and how to trust them."""

    def check(plugins: list[Plugin]) -> list[Plugin]:
        pending = untrusted([review_plugin(plugin, store) for plugin in plugins], store)
        if pending:
            raise PluginTrustError(refusal(pending))
        return plugins

    return check


def in_workspace(plugin: Plugin, workspace: Path) -> str | None:
    """Why `plugin` cannot be used with `workspace` (None: it can): its folder is inside it,
    where the agent may edit what the user trusted after the review."""
    folder, root = os.path.realpath(plugin.path), os.path.realpath(workspace)
    if folder != root and not folder.startswith(root.rstrip("/") + "/"):
        return None
    name = " ".join(shell_quoted(p) for p in (plugin.name, plugin.version) if p)
    return (
        f"plugin {name} ({quote(str(plugin.path))}) is inside the workspace, where the agent "
        "can change it after you trust it: move it out of the workspace, or remove it from "
        "the plugins list of the [agent] table of config.toml."
    )


def outside_workspace(workspace: Path, check: PluginCheck) -> PluginCheck:
    """`check`, for plugins none of which is inside `workspace` (else PluginTrustError)."""

    def checked(plugins: list[Plugin]) -> list[Plugin]:
        refused = [why for plugin in plugins if (why := in_workspace(plugin, workspace))]
        if refused:
            raise PluginTrustError("\n".join(refused))
        return check(plugins)

    return checked


def _hook_lines(plugin: Plugin) -> list[str]:
    """One line per hook: the event, which tools it watches, and what it runs or asks."""
    config = plugin.hooks
    if config is None:
        return []
    lines = []
    for name, info in type(config).model_fields.items():
        event = info.alias or name  # PreToolUse, as the plugin's hooks.json says
        for matcher in getattr(config, name):
            tools = "" if matcher.matcher in ("", "*") else f" ({quote(matcher.matcher)})"
            for hook in matcher.hooks:
                if hook.command:
                    mode = " in the background" if hook.async_ else ""
                    lines.append(f"  {event}{tools}{mode}: $ {shell_quoted(hook.command)}")
                else:
                    text = hook.prompt or hook.system_prompt or ""
                    first = shell_quoted(text.strip().splitlines()[0] if text.strip() else "")
                    lines.append(f"  {event}{tools}: asks the model ({hook.type.value}): {first}")
    return lines


def _rootless(line: str, root: Path) -> str:
    """`line` with the plugin's folder written as ${CLAUDE_PLUGIN_ROOT}."""
    return line.replace(str(root), "${CLAUDE_PLUGIN_ROOT}")


def _changes(before: dict[str, Any], plugin: Plugin, runs: list[str]) -> list[str]:
    """What differs from the version the user trusted."""
    out = []
    if before.get("version") != plugin.version:
        was = shell_quoted(str(before.get("version") or "?"))
        out.append(f"version {was} -> {shell_quoted(plugin.version or '?')}")
    if before.get("commit") != plugin.commit and plugin.commit:
        was = shell_quoted(str(before.get("commit") or "?")[:12])
        out.append(f"commit {was} -> {shell_quoted(plugin.commit[:12])}")
    kept = before.get("runs")
    old: list[Any] = kept if isinstance(kept, list) else []
    out += [f"now runs: {line.strip()}" for line in runs if line not in old]
    out += [f"no longer runs: {str(line).strip()}" for line in old if line not in runs]
    return out
