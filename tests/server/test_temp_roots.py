"""The default roots' scratch space: folders directly in the temp dir that are this user's
alone (mkdtemp's), and nothing else there (not what such a folder holds: pytest's own is
one)."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import pytest

from ohtui.server.roots import OutsideRootsError, Roots, private_temp_folder


def _temp() -> Path:
    return Path(os.path.realpath(tempfile.gettempdir()))


def test_a_private_temp_folder_is_in_and_a_shared_one_is_not(tmp_path: Path) -> None:
    private = Path(os.path.realpath(tempfile.mkdtemp(prefix="ohtui-roots-")))
    shared = _temp() / f"ohtui-roots-shared-{uuid.uuid4().hex}"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    link = _temp() / f"ohtui-roots-link-{uuid.uuid4().hex}"
    link.symlink_to(private)
    try:
        assert private_temp_folder(private)
        assert not private_temp_folder(private / "deeper")  # only the folder itself
        assert not private_temp_folder(shared)
        assert not private_temp_folder(_temp())
        assert not private_temp_folder(link)  # the link itself, as a top folder
        roots = Roots((tmp_path,), private_temp=True)
        assert roots.check(str(private)) == private
        with pytest.raises(OutsideRootsError, match="your private folders"):
            roots.check(str(shared))
        with pytest.raises(OutsideRootsError):
            Roots((tmp_path,)).check(str(private))  # roots given: no scratch space
    finally:
        link.unlink()
        shared.rmdir()
        private.rmdir()


def test_a_missing_top_folder_is_made_private_first() -> None:
    fresh = _temp() / f"ohtui-roots-new-{uuid.uuid4().hex}"
    try:
        assert Roots((Path("/nonexistent-root"),), private_temp=True).check(str(fresh)) == fresh
        assert fresh.is_dir() and fresh.stat().st_mode & 0o777 == 0o700
    finally:
        if fresh.exists():
            fresh.rmdir()
