"""The routers the SDK ships: by content (multimodal) and at random."""
