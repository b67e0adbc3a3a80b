"""Screens: the chat, and the modals it opens."""
