"""The Textual front end: the chat screen, the approval modal, and the worker bridge."""
