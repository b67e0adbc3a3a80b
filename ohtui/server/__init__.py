"""`ohtui serve`: the agent server, speaking the OpenHands agent-server protocol."""
