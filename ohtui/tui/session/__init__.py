"""The UI's session on one conversation: `Session`, composed of one part per job (see
`core`)."""

from ohtui.tui.session.core import Session

__all__ = ["Session"]
