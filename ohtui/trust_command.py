"""`ohtui trust`: review what the workspace's .mcp.json and the configured plugins would run,
and trust them, without the UI (what a headless run refuses until they are trusted).

Prints everything each would run (commands shell-quoted, the secrets they receive, what
changed since it was trusted) and asks; `--yes` trusts what it printed without asking (for
scripts that have reviewed it). Exit codes: 0 all trusted, 1 something left untrusted,
3 configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ohtui.sdk.plugins import Plugin
    from ohtui.settings.profile import Profile

Ask = Callable[[str], bool]


def build_parser() -> argparse.ArgumentParser:
    """The arguments of `ohtui trust`."""
    parser = argparse.ArgumentParser(
        prog="ohtui trust",
        description="Review what the workspace's .mcp.json and your plugins would run, and "
        "trust them (headless runs use only what you trusted).",
    )
    parser.add_argument(
        "-w", "--workspace", type=Path, default=None, help="the workspace (default: here)"
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="use this config.toml")
    parser.add_argument(
        "-y", "--yes", action="store_true", help="trust what is shown without asking"
    )
    return parser


def main(argv: list[str], out: TextIO | None = None, ask: Ask | None = None) -> int:
    """Run `ohtui trust ARGS`; returns the exit code."""
    from ohtui.settings import paths
    from ohtui.settings.profile import Profile

    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    if not workspace.is_dir():
        _say(f"ohtui trust: the workspace {workspace} is not a folder", sys.stderr)
        return 3
    config = args.config.expanduser() if args.config else paths.config_file()
    profile = Profile(config, {}, use_keyring=True, environ=os.environ).load()
    if ask is None:
        ask = _always if args.yes else _terminal_question(out)
    project = _project(profile, workspace, out, ask)
    if project is None and not profile.settings.agent.plugins:
        _say(f"Nothing to trust: {workspace} has no .mcp.json and no plugin is set.", out)
        return 0
    left = (project or []) + _plugins(profile, workspace, out, ask)
    if left:
        _say(f"Not trusted: {', '.join(left)}.", out)
        return 1
    return 0


def _project(profile: Profile, workspace: Path, out: TextIO, ask: Ask) -> list[str] | None:
    """Review and trust the workspace's .mcp.json; what is left untrusted (None: there is
    no .mcp.json with servers)."""
    from ohtui.settings import paths
    from ohtui.settings.mcp_trust import (
        TrustStore,
        confinement,
        read_project_servers,
        trust_project,
        what_changed,
        workspace_key,
    )

    project = read_project_servers(workspace)
    if project is None or (project.error is None and not project.servers):
        return None
    if project.error is not None:
        _say(f"{project.error}; its MCP servers are not used.", out)
        return [str(project.path)]
    store = TrustStore(paths.mcp_trust_file())
    if store.is_trusted(workspace_key(workspace), project.digest):
        _say(f"{project.path}: trusted, as it is.", out)
        return []
    where = confinement(profile.settings.sandbox.config())
    _show(
        out,
        f"The MCP servers of {project.path}",
        project.review(profile.user_secrets().keys(), where),
        what_changed(project, workspace, store),
    )
    if not ask("Trust these servers?"):
        return [str(project.path)]
    trust_project(project, workspace, store)
    _say(f"{project.path}: trusted.", out)
    return []


def _plugins(profile: Profile, workspace: Path, out: TextIO, ask: Ask) -> list[str]:
    """Review and trust the configured plugins (fetched as a new conversation would); one
    inside the workspace is refused, as a run would."""
    from ohtui.opening.agent import plugin_sources
    from ohtui.sdk.plugins import PluginFetchError, PluginLoadError, load_plugins
    from ohtui.settings import paths
    from ohtui.settings.mcp_trust import TrustStore, confinement
    from ohtui.settings.plugin_trust import in_workspace, review_plugin, trust_plugin

    sources = plugin_sources(profile.settings.agent.plugins)
    if not sources:
        return []
    store = TrustStore(paths.plugin_trust_file())
    where = confinement(profile.settings.sandbox.config())
    secrets = profile.user_secrets().keys()
    left: list[str] = []

    def check(plugins: list[Plugin]) -> list[Plugin]:
        for plugin in plugins:
            refused = in_workspace(plugin, workspace)
            if refused is not None:
                _say(refused, out)
                left.append(f"plugin {plugin.name}")
                continue
            reviewed = review_plugin(plugin, store, secrets, where)
            if store.is_trusted(reviewed.key, reviewed.digest):
                _say(f"plugin {reviewed.title}: trusted, as it is.", out)
                continue
            _show(out, f"The plugin {reviewed.title}", reviewed.text, reviewed.changed)
            if ask("Trust this plugin?"):
                trust_plugin(reviewed, store)
                _say(f"plugin {reviewed.title}: trusted.", out)
            else:
                left.append(f"plugin {reviewed.title}")
        return []

    try:
        load_plugins(sources, check=check)
    except (PluginFetchError, PluginLoadError) as exc:
        _say(f"ohtui trust: {exc}", sys.stderr)
        return ["the plugins"]
    return left


def _show(out: TextIO, title: str, review: str, changed: list[str]) -> None:
    _say(f"\n{title} would run:\n", out)
    if changed:
        _say("Changed since you trusted it:", out)
        _say("\n".join(f"  - {line}" for line in changed) + "\n", out)
    _say(review + "\n", out)


def _say(text: str, stream: TextIO, end: str = "\n") -> None:
    """Write a line of ours that quotes others' text (a plugin's, a project file's): every
    write of `ohtui trust` goes through here, nothing in it acting on the terminal."""
    from ohtui.terminal_text import terminal_safe

    print(terminal_safe(text), file=stream, end=end, flush=True)


def _always(question: str) -> bool:
    return True


def _terminal_question(out: TextIO) -> Ask:
    """Ask on the terminal; without one, trust nothing (and say how to)."""

    def ask(question: str) -> bool:
        if not sys.stdin.isatty():
            _say(f"{question} No terminal to ask on: pass --yes to trust it.", out)
            return False
        _say(f"{question} [y/N] ", out, end="")
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:
            return False
        return answer.strip().lower() in ("y", "yes")

    return ask
