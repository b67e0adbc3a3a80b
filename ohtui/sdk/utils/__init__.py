"""Small helpers shared by the engine's modules."""
