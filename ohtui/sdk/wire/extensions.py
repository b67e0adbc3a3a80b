"""ohtui's additions to the OpenHands agent-server protocol, in one place.

OpenHands clients forbid unknown fields in events, but keep a conversation's state as a
plain dict: so what `ohtui serve` tells beyond the protocol travels as extra state keys
(which OpenHands clients store and never read), or, in events, only to a client that asked
for it with a query parameter (which an OpenHands server ignores).
"""

from __future__ import annotations

POLICY_FIELD = "ohtui_confirmation_policy"
"""State key: the conversation's confirmation policy as ohtui has it (approval rules and
all). `confirmation_policy` beside it is the same policy in a kind OpenHands knows (a rules
policy's fallback), for OpenHands clients."""
SANDBOX_FIELD = "ohtui_sandbox"
"""State key (and `/server_info` key): how the server confines the conversation's commands,
`{"mode": "off" | "read-only" | "workspace-write", "network": bool, "problem": str | None}`,
as in force (`problem`: why it is off though the settings asked for one). A server without it
does not say."""
SKILLS_FIELD = "ohtui_skills"
"""State key: the skills the agent's context got when the conversation opened on the server,
`[{"name": str, "origin": "instructions" | "project" | "user" | "other", "source": path}]`
(AGENTS.md and the like are "instructions"). A server without it does not say."""
EVENT_FIELDS_PARAM = "ohtui_fields"
"""Query parameter of the event socket, `events/search` and a single event's GET: with
`true`, events keep ohtui's own fields (an action's `security_risk_reason`)."""
