"""Built-in tools: terminal, file_editor, task_tracker."""
