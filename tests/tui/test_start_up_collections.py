"""ohtui's TUI starts without garbage collection, and collects again once its first frame is
on the terminal, with what start-up made frozen (ohtui.long_lived, starting/started).

The real command line (`ohtui.cli.main`) on a real pseudo-terminal: the app records the
collector's state when it mounts, when its first frame is drawn, and right after `started`
ran; the process then says whether the collector was on after the app ended."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from pty_run import run_on_pty

SCRIPT = textwrap.dedent(
    """
    import gc, json, sys
    import ohtui.tui.app as app_module
    from ohtui import cli

    record = sys.argv.pop(1)
    seen = {"before main": gc.isenabled()}
    App = app_module.OhtuiApp
    mount, display = App.on_mount, App.post_display_hook

    def on_mount(self):
        seen["mounting"] = gc.isenabled()
        mount(self)
        self.call_after_refresh(report, self)  # after the app's own (`started`)

    def post_display_hook(self):
        seen.setdefault("first frame drawn", gc.isenabled())
        display(self)

    def report(self):
        seen["after the first frame"] = gc.isenabled()
        seen["frozen"] = gc.get_freeze_count()
        if "--resume" in sys.argv:  # the picker opens first: wait for its frame too
            self.set_interval(0.05, lambda: picker_shown(self))
        else:
            self.exit()

    def picker_shown(self):
        from ohtui.tui.screens.picker import PickerScreen

        if isinstance(self.screen, PickerScreen) and "picker" not in seen:
            seen["picker"] = True
            self.call_after_refresh(after_picker, self)

    def after_picker(self):
        seen["after the picker's frame"] = gc.isenabled()
        self.exit()

    App.on_mount, App.post_display_hook = on_mount, post_display_hook
    cli.main()
    seen["after the app"] = gc.isenabled()
    with open(record, "w") as file:
        json.dump(seen, file)
    """
)


@pytest.mark.parametrize("resume", [False, True], ids=["new", "picker first"])
def test_the_tui_collects_nothing_until_its_first_frame_then_collects_again(
    tmp_path: Path, resume: bool
) -> None:
    """With `--resume` the picker opens right after the first frame, its own hold
    overlapping start-up's: the collector is on once both have let go."""
    script, record = tmp_path / "probe.py", tmp_path / "seen.json"
    script.write_text(SCRIPT)
    env = {
        **os.environ,
        "OHTUI_DATA_DIR": str(tmp_path / "data"),
        "OHTUI_LOG_DIR": str(tmp_path / "log"),
        "OHTUI_CONFIG": str(tmp_path / "config.toml"),
        "TERM": "xterm-256color",
    }
    argv = [sys.executable, str(script), str(record), "--model", "openai/x", "-w", str(tmp_path)]
    run = run_on_pty(argv + (["--resume"] if resume else []), env)
    assert record.exists(), run.output[-2000:]
    seen = json.loads(record.read_text())
    assert seen["before main"] is True
    assert seen["mounting"] is False
    assert seen["first frame drawn"] is False
    if not resume:  # (with --resume, the picker may already hold it then)
        assert seen["after the first frame"] is True
    assert seen["frozen"] > 10_000  # Textual's and ohtui's modules, the first screen
    assert seen["after the app"] is True
    if resume:
        assert seen["after the picker's frame"] is True
