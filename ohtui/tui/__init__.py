"""The Textual front end: the chat screen, the approval modal, and the worker bridge."""

import os

FRAME_RATE = "120"
"""Textual draws at most TEXTUAL_FPS frames a second (60 by default), so a streamed word
waits up to a frame to be shown; 120 halves that wait. Frames are drawn only when something
changed: an idle screen costs nothing more. A TEXTUAL_FPS the user set wins."""

# Set before Textual is first imported (it reads the variable then); ohtui.tui.app takes it
# out again, so the agent's commands do not inherit it.
SET_FRAME_RATE = "TEXTUAL_FPS" not in os.environ
os.environ.setdefault("TEXTUAL_FPS", FRAME_RATE)
