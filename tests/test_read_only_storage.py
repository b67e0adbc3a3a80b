"""A read-only data folder: saved conversations still list and open read-only; anything that
must write says which setting moves the folder (OHTUI_DATA_DIR, [storage])."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from read_only_storage import python, run_read_only, save_conversation

READ = """
import json, sys
from ohtui.sdk.conversation import StorageReadOnlyError, list_conversations
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.conversation import history_tail
folder = sys.argv[1]
summaries = list_conversations(folder)
events, total = history_tail(folder, summaries[0].id, 10)
try:
    ConversationStore(folder)
    refused = None
except StorageReadOnlyError as exc:
    refused = str(exc)
print(json.dumps({"ids": [s.id for s in summaries], "total": total, "refused": refused}))
"""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder with one saved conversation (made while it could be written)."""
    (tmp_path / "project").mkdir()
    save_conversation(tmp_path / "data" / "conversations", tmp_path / "project", "hello there")
    return tmp_path / "data"


def test_saved_conversations_list_and_read_in_a_folder_that_cannot_be_written(
    data: Path,
) -> None:
    folder = data / "conversations"
    result = run_read_only(data, python("-c", READ, str(folder)))
    assert result.returncode == 0, result.stderr
    said = json.loads(result.stdout)
    assert len(said["ids"]) == 1 and said["total"] >= 1
    assert said["refused"] == (
        f"The conversations folder '{folder}' cannot be written (a read-only file system)."
    )


@pytest.mark.parametrize("resume", [False, True])
def test_headless_in_a_folder_that_cannot_be_written_names_the_setting(
    data: Path, tmp_path: Path, resume: bool
) -> None:
    (summary_id,) = [p.name for p in (data / "conversations").iterdir() if len(p.name) == 32]
    env = {
        "OHTUI_DATA_DIR": str(data),
        "OHTUI_CONFIG": str(tmp_path / "none.toml"),
        "OHTUI_LOG_DIR": str(tmp_path / "logs"),
        "OHTUI_MODEL": "openai/test-model",
        "OHTUI_BASE_URL": "http://127.0.0.1:9/v1",
        "OHTUI_API_KEY": "sk-test",
    }
    args = ["ohtui", "-p", "x", "-w", str(tmp_path / "project")]
    if resume:
        args += ["--resume", summary_id]
    result = run_read_only(data, python("-m", "ohtui", *args[1:]), env)
    assert result.returncode == 3, result.stderr
    assert f"The conversations folder '{data / 'conversations'}' cannot be written" in result.stderr
    what = "this conversation cannot run" if resume else "a new conversation cannot be saved"
    assert what in result.stderr
    assert "Set OHTUI_DATA_DIR (or conversations_dir in the [storage] table" in result.stderr
    assert "Traceback" not in result.stderr
