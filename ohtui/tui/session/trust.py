"""Trust questions asked while a conversation opens: the MCP servers of the workspace's
.mcp.json and the plugins, each asked on the opening thread while the screen shows it."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ohtui.settings.mcp_trust import (
    TrustStore,
    confinement,
    read_project_servers,
    trust_project,
    trusted_servers,
    what_changed,
)
from ohtui.settings.plugin_trust import review_plugin, trust_plugin
from ohtui.tui import messages as msg

if TYPE_CHECKING:
    from pathlib import Path

    from ohtui.sdk.plugins import Plugin
    from ohtui.settings.profile import Profile
    from ohtui.tui.options import AppOptions
    from ohtui.tui.session.link import Link


class TrustQuestions:
    """Asks the user to trust what a conversation would run, and keeps the answers."""

    def __init__(self, link: Link, options: AppOptions, profile: Profile) -> None:
        self._link = link
        self._profile = profile
        self._mcp_trust = TrustStore(options.mcp_trust_file)
        self._plugin_trust = TrustStore(options.plugin_trust_file)
        self._answer: bool | None = None
        self._answered = threading.Event()

    def project_mcp(self, workspace: Path) -> dict[str, Any]:
        """The .mcp.json servers of the folder the conversation opens in (a resumed one's
        own), once the user trusts this content of it (asked here, on the opening thread,
        while the UI shows the question)."""
        post = self._link.post
        project = read_project_servers(workspace)
        servers, notice = trusted_servers(project, workspace, self._mcp_trust)
        if project is None or notice is None or project.error is not None:
            if notice:
                post(msg.Notice(notice, "warning"))
            return servers
        profile = self._profile
        secrets = profile.user_secrets().keys()
        where = confinement(profile.settings.sandbox.config())
        while True:
            changed = what_changed(project, workspace, self._mcp_trust)
            note = (
                "They start now and whenever ohtui opens this workspace, until what they run "
                "changes. Cancel starts none of them."
            )
            question = f"Trust the MCP servers of this workspace's {project.path.name}?"
            if not self._ask(question, project.review(secrets, where), changed, note):
                post(msg.Notice(f"{project.path} is not trusted: its servers are off.", "warning"))
                return {}
            now = read_project_servers(workspace)
            if now is None or now.error is not None:
                return {}
            if now.digest == project.digest:  # nothing changed while the user read it
                trust_project(project, workspace, self._mcp_trust)
                return project.confined_servers()
            project = now

    def trusted_plugins(self, plugins: list[Plugin]) -> list[Plugin]:
        """The plugins to use: those the user trusted as they are, or trusts now (asked
        here, on the opening thread, before anything of them is used)."""
        profile = self._profile
        secrets = profile.user_secrets().keys()
        where = confinement(profile.settings.sandbox.config())
        kept = []
        for plugin in plugins:
            reviewed = review_plugin(plugin, self._plugin_trust, secrets, where)
            if self._plugin_trust.is_trusted(reviewed.key, reviewed.digest):
                kept.append(plugin)
                continue
            note = (
                "Its hooks and servers run in every conversation from now on, until the plugin "
                "changes. Cancel leaves it out of this conversation."
            )
            question = f"Trust the plugin {reviewed.title}?"
            if self._ask(question, reviewed.text, reviewed.changed, note):
                trust_plugin(reviewed, self._plugin_trust)
                kept.append(plugin)
            else:
                self._link.post(
                    msg.Notice(
                        f"Plugin {reviewed.title} is not trusted: it is left out.", "warning"
                    )
                )
        return kept

    def _ask(self, question: str, review: str, changed: list[str], note: str) -> bool:
        """Ask the user to trust what would run, and wait for the answer (opening thread)."""
        self._answered.clear()
        self._link.post(msg.TrustNeeded(question, review, changed, note))
        self._answered.wait()
        return bool(self._answer)

    def answer(self, trusted: bool | None) -> None:
        """The user's answer to TrustNeeded (the opening goes on)."""
        self._answer = bool(trusted)
        self._answered.set()

    def give_up(self) -> None:
        """The session closes: an opening waiting for an answer gives up."""
        self._answered.set()
