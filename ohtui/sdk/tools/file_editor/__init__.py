"""The `file_editor` tool: view, create and edit text files in the workspace, with undo."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.file_editor.definition import (
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
)
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor

register_tool("file_editor", FileEditorTool)

__all__ = ["FileEditorAction", "FileEditorExecutor", "FileEditorObservation", "FileEditorTool"]
