"""`ohtui serve` runs conversations only in folders under its roots (`--root`, `[server]
roots`; by default the folder it was started in), however the path is spelled."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import create_payload, user_message
from server_process import ServerProcess


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base/root (the server's folder) with a project inside; base/outside next to it."""
    base = tmp_path_factory.mktemp("roots")
    (base / "root" / "project" / "sub").mkdir(parents=True)
    (base / "outside").mkdir()
    (base / "root-evil").mkdir()
    (base / "root" / "link-out").symlink_to(base / "outside")
    (base / "root" / "link-in").symlink_to(base / "root" / "project")
    (base / "root" / "project" / "file.txt").write_text("a file\n")
    return base


@pytest.fixture(scope="module")
def rooted(tree: Path) -> Iterator[ServerProcess]:
    """A server started in base/root with no --root: that folder is its one root."""
    process = ServerProcess(tree / "data", cwd=tree / "root").start()
    try:
        yield process
    finally:
        process.stop()


def create(server: ServerProcess, llm: ScriptedLLMServer, working_dir: str) -> httpx.Response:
    payload = create_payload(llm, Path("/"))
    payload["workspace"]["working_dir"] = working_dir
    with server.client() as client:
        return client.post("/api/conversations", json=payload)


@pytest.mark.parametrize(
    "working_dir",
    [
        "{base}/outside",
        "{base}/root/../outside",
        "{base}/root/project/../../outside",
        "{base}/root/link-out",
        "{base}/root/link-out/new-folder",
        "{base}/root-evil",
        "{base}",
        "/",
        "/etc",
        "~",
        "{base}/root/./../root-evil/",
    ],
)
def test_a_folder_outside_the_roots_is_refused(
    rooted: ServerProcess,
    tree: Path,
    module_llm: ScriptedLLMServer,
    working_dir: str,
) -> None:
    response = create(rooted, module_llm, working_dir.format(base=tree))
    assert response.status_code == 403, response.text
    detail = response.json()["detail"]
    assert "outside" in detail and str(tree / "root") in detail and "--root" in detail
    assert not (tree / "root" / "link-out" / "new-folder").exists()
    assert not (tree / "outside" / "new-folder").exists()


@pytest.mark.parametrize(
    ("working_dir", "real"),
    [
        ("{base}/root", "{base}/root"),
        ("{base}/root/project", "{base}/root/project"),
        ("{base}/root/project/sub/..", "{base}/root/project"),
        ("{base}/root/link-in", "{base}/root/project"),
        ("{base}/root/project/new", "{base}/root/project/new"),
    ],
)
def test_a_folder_inside_is_fine_and_pinned_to_its_real_path(
    rooted: ServerProcess,
    tree: Path,
    module_llm: ScriptedLLMServer,
    working_dir: str,
    real: str,
) -> None:
    response = create(rooted, module_llm, working_dir.format(base=tree))
    assert response.status_code == 201, response.text
    assert response.json()["workspace"]["working_dir"] == real.format(base=tree)


@pytest.mark.parametrize(
    ("working_dir", "words"),
    [
        ("project", "absolute"),
        ("./project", "absolute"),
        ("{base}/root/project/file.txt", "not a folder"),
        ("{base}/root/pro\x00ject", "NUL"),
    ],
)
def test_a_path_that_cannot_be_a_workspace_is_422(
    rooted: ServerProcess,
    tree: Path,
    module_llm: ScriptedLLMServer,
    working_dir: str,
    words: str,
) -> None:
    response = create(rooted, module_llm, working_dir.format(base=tree))
    assert response.status_code == 422, response.text
    assert words in response.json()["detail"]


def test_the_start_line_names_the_roots(rooted: ServerProcess, tree: Path) -> None:
    httpx.get(rooted.url + "/server_info", timeout=120)  # once the engine has loaded
    assert f"roots: {tree / 'root'} (" in rooted.log()


def test_root_flags_relative_and_several(
    tree: Path, tmp_path: Path, llm_script: ScriptedLLMServer
) -> None:
    server = ServerProcess(
        tmp_path,
        cwd=tree / "root" / "project",
        args=("--root", "..", "--root", str(tree / "outside")),
    ).start()
    try:
        assert create(server, llm_script, str(tree / "outside")).status_code == 201
        assert create(server, llm_script, str(tree / "root" / "project")).status_code == 201
        assert create(server, llm_script, str(tree / "root-evil")).status_code == 403
        assert f"roots: {tree / 'root'}, {tree / 'outside'}" in server.log()
    finally:
        server.stop()


def test_roots_from_config_toml(tree: Path, tmp_path: Path, llm_script: ScriptedLLMServer) -> None:
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[server]\nroots = ["{tree / "outside"}"]\n')
    server = ServerProcess(tmp_path, cwd=tree / "root").start()
    try:
        assert create(server, llm_script, str(tree / "outside")).status_code == 201
        assert create(server, llm_script, str(tree / "root" / "project")).status_code == 403
    finally:
        server.stop()


@pytest.mark.parametrize("root", ["missing-folder", "{base}/root/project/file.txt"])
def test_a_root_that_is_no_folder_stops_the_start(tree: Path, tmp_path: Path, root: str) -> None:
    server = ServerProcess(tmp_path, cwd=tree / "root", args=("--root", root.format(base=tree)))
    server.start(wait=False)
    assert server.process is not None
    assert server.process.wait(60) == 2
    assert "--root" in server.log() and "Traceback" not in server.log()


def test_a_saved_conversation_outside_the_roots_stays_closed(
    tree: Path, tmp_path: Path, llm_script: ScriptedLLMServer
) -> None:
    """Made under wider roots, then the server restarted with narrower ones: it is listed
    but not opened, and nothing it asks runs; it can still be deleted."""
    wide = ServerProcess(tmp_path, cwd=tree).start()
    try:
        response = create(wide, llm_script, str(tree / "outside"))
        assert response.status_code == 201
        cid = response.json()["id"]
    finally:
        wide.stop()
    narrow = ServerProcess(tmp_path, cwd=tree / "root").start()
    try:
        with narrow.client() as client:
            listed = client.get("/api/conversations/search").json()["items"]
            assert cid in [item["id"] for item in listed]
            opened = client.get(f"/api/conversations/{cid}")
            assert opened.status_code == 403 and "outside" in opened.json()["detail"]
            sent = client.post(f"/api/conversations/{cid}/events", json=user_message("x", True))
            assert sent.status_code == 403
            assert llm_script.pending() == 0 and not llm_script.requests
            deleted = client.delete(f"/api/conversations/{cid}")
            assert deleted.status_code == 200, deleted.text
            listed = client.get("/api/conversations/search").json()["items"]
            assert cid not in [item["id"] for item in listed]
            assert client.delete(f"/api/conversations/{cid}").status_code == 404
    finally:
        narrow.stop()


def test_a_symlink_swapped_after_the_check_changes_nothing(
    rooted: ServerProcess, tree: Path, llm_script: ScriptedLLMServer
) -> None:
    """The conversation keeps the real folder it was checked at, whatever its path names
    later: a command runs there, not where a new link points."""
    project = tree / "root" / "swap"
    project.mkdir()
    link = tree / "root" / "swap-link"
    link.symlink_to(project)
    response = create(rooted, llm_script, str(link))
    assert response.status_code == 201
    cid = response.json()["id"]
    link.unlink()
    link.symlink_to(tree / "outside")
    llm_script.reply_tool_call("terminal", {"command": "touch here", "security_risk": "LOW"})
    llm_script.reply_text("done")
    with rooted.client() as client:
        client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
        wait_finished(client, cid)
    assert (project / "here").exists()
    assert not (tree / "outside" / "here").exists()


def wait_finished(client: httpx.Client, cid: str) -> Any:
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        info = client.get(f"/api/conversations/{cid}").json()
        if info["execution_status"] in ("finished", "error", "paused"):
            return info
        time.sleep(0.1)
    raise AssertionError("the run did not end")


def test_home_is_expanded_before_the_check(
    tmp_path: Path, llm_script: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "code").mkdir(parents=True)
    server = ServerProcess(
        tmp_path / "data", cwd=home / "code", env={"HOME": str(home)}, args=()
    ).start()
    try:
        assert create(server, llm_script, "~/code").status_code == 201
        assert create(server, llm_script, "~").status_code == 403
        assert create(server, llm_script, "~root").status_code == 403
    finally:
        server.stop()
    assert os.environ.get("HOME") != str(home)


# --- tries of the same classes, not designed around -----------------------------------


@pytest.mark.parametrize(
    ("working_dir", "status"),
    [
        ("/{base}//root///project/", 201),
        ("/proc/self/cwd/project", 201),  # the server's own folder, the root
        ("/proc/self/cwd/..", 403),
        ("/proc/self/root{base}/outside", 403),
        ("{base}/root/loop-a", 422),  # a loop of links resolves nowhere
        ("{base}/root/" + "d" * 300, 422),  # a name too long for the file system
    ],
)
def test_more_spellings(
    rooted: ServerProcess,
    tree: Path,
    module_llm: ScriptedLLMServer,
    working_dir: str,
    status: int,
) -> None:
    loop_a, loop_b = tree / "root" / "loop-a", tree / "root" / "loop-b"
    if not loop_a.is_symlink():
        loop_a.symlink_to(loop_b)
        loop_b.symlink_to(loop_a)
    response = create(rooted, module_llm, working_dir.format(base=tree))
    assert response.status_code == status, response.text
    assert "Traceback" not in response.text


def test_a_root_given_as_a_link(tree: Path, tmp_path: Path, llm_script: ScriptedLLMServer) -> None:
    link = tmp_path / "root-link"
    link.symlink_to(tree / "root")
    server = ServerProcess(tmp_path / "data", cwd=tmp_path, args=("--root", str(link))).start()
    try:
        assert create(server, llm_script, str(link / "project")).status_code == 201
        assert create(server, llm_script, str(tree / "root" / "project")).status_code == 201
        assert create(server, llm_script, str(tree / "outside")).status_code == 403
    finally:
        server.stop()


def test_a_folder_swapped_for_a_link_out_before_a_restart(
    tree: Path, tmp_path: Path, llm_script: ScriptedLLMServer
) -> None:
    project = tree / "root" / "swapped"
    project.mkdir()
    server = ServerProcess(tmp_path / "data", cwd=tree / "root").start()
    try:
        cid = create(server, llm_script, str(project)).json()["id"]
    finally:
        server.stop()
    project.rmdir()
    project.symlink_to(tree / "outside")
    again = ServerProcess(tmp_path / "data", cwd=tree / "root").start()
    try:
        with again.client() as client:
            assert client.get(f"/api/conversations/{cid}").status_code == 403
    finally:
        again.stop()
