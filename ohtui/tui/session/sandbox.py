"""How a session's commands are confined: shown, and switched for the rest of the session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.tui import messages as msg

if TYPE_CHECKING:
    from ohtui.settings.profile import Profile
    from ohtui.tui.session.link import Link


class SandboxSwitch:
    """Reads and switches the sandbox of one conversation (not saved in the settings)."""

    def __init__(self, link: Link, profile: Profile) -> None:
        self._link = link
        self._profile = profile

    def describe(self) -> str:
        """How commands are confined: e.g. "workspace-write, no network", or "off"; on an
        agent server, as it reports it ("unknown" when it does not say)."""
        from ohtui.sdk import RemoteConversation

        conversation = self._link.conversation
        if isinstance(conversation, RemoteConversation):
            reported = conversation.state.reported_sandbox
            return reported.describe() if reported is not None else "unknown"
        config = conversation.sandbox if conversation is not None else None
        return config.describe() if config is not None else "off"

    def switch(self, mode: str) -> None:
        """Confine commands as `mode` says for the rest of this session."""
        conversation = self._link.conversation
        if conversation is None:
            return

        def switch() -> None:
            from ohtui.opening.sandbox import install_sandbox
            from ohtui.sdk.sandbox import SandboxMode

            config = self._profile.settings.sandbox.config()
            try:
                problem = install_sandbox(
                    conversation,
                    config.model_copy(update={"mode": SandboxMode(mode)}),
                    self._profile.config_path,
                )
            except NotImplementedError as exc:  # its tools run elsewhere
                self._link.post(msg.Notice(str(exc), "warning"))
                return
            if problem:
                self._link.post(msg.Notice(problem, "warning"))
            self._link.post(msg.SandboxChanged(self.describe()))

        self._link.spawn(switch, "ohtui-sandbox")
