"""The git configuration reader against git itself, and the keys it lets through."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ohtui.sdk.security.git_config import GitConfigError, config_keys, unsafe_keys

FILES = [
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n",
    '[remote "origin"]\n\turl = x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    "[core] fsmonitor = evil\n",
    '[include]\n\tpath = x\n[includeIf "gitdir:/x/"]\n\tpath = y\n',
    "[core]\n\tx = a \\\n[core]\n\tfsmonitor = 1\n",
    '[core]\n\tx = "a ; b" ; c\n\tpager\n',
    "[a.B]\n\tK = 1\n",
    '[a "x]y"]\n\tk = 1\n',
    '[a "q\\"z"]\n\tk = 1\n',
    "[core]\r\n\tbare = false\r\n\tpager = less\r\n",
    "# c\n; d\n[core]\n\tbare\n",
    '[core]\n\tx = "unterminated\n',
    "[core]\n\tk # c\n",
    "\ufeff[core]\n\tbare = 1\n",
    "[core\n",
    "[core]\n\tx = a\\q\n",
    '[diff "x"]\n\ttextconv = sh -c evil\n',
    "[core ]\n\tbare = 1\n",
    '[core "x" ]\n\tbare = 1\n',
]


@pytest.mark.parametrize("text", FILES)
def test_keys_as_git_reads_them(text: str, tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(text, encoding="utf-8")
    listed = subprocess.run(
        ["git", "config", "--file", str(path), "--no-includes", "--list", "--name-only"],
        check=False,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"},
    )
    try:
        keys = config_keys(text)
    except GitConfigError:
        assert listed.returncode != 0, listed.stdout
        return
    assert listed.returncode == 0 and keys == listed.stdout.split()


def test_only_known_harmless_keys_pass() -> None:
    text = (
        '[core]\n\tbare = false\n\tfsmonitor = x\n[remote "o"]\n\turl = u\n\tvcs = x\n'
        '[color "diff"]\n\tnew = green\n[include]\n\tpath = p\n[diff "d"]\n\ttextconv = t\n'
        '[user]\n\temail = a@b\n[branch "main"]\n\tremote = o\n'
    )
    assert unsafe_keys(text) == [
        "core.fsmonitor",
        "remote.o.vcs",
        "include.path",
        "diff.d.textconv",
    ]
