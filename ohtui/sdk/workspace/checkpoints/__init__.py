"""Checkpoints of a workspace's files, taken before actions that may change them, restorable."""

from ohtui.sdk.workspace.checkpoints.model import Checkpoint, CheckpointUnavailable, FileChange
from ohtui.sdk.workspace.checkpoints.store import CheckpointStore

__all__ = ["Checkpoint", "CheckpointStore", "CheckpointUnavailable", "FileChange"]
