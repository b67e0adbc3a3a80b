"""Screens: the chat (with its slash commands, and the Navigator it reaches the app through),
and the modals the app opens over it."""
