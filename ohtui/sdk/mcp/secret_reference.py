"""How an MCP server's settings name a secret: its own module, so the tool definition (read
with every saved MCP action) does not load the configuration's models."""

import re

SECRET_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
"""`${NAME}` or `$NAME`: a secret of the conversation, filled in when used."""
