"""HandoverDriver: a frame reaches the terminal before the UI thread goes on with its work.

A real Textual app on a real pseudo-terminal: right after its first frame the UI thread
keeps the GIL for half a second. Textual's own driver leaves the frame with its writer
thread, which waits for the GIL; ours has it written out first."""

from __future__ import annotations

import io
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pty_run import run_on_pty
from textual.app import App
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver

from ohtui.tui.app import OhtuiApp, frame_handover
from ohtui.tui.app.frame_handover import HandoverDriver
from ohtui.tui.options import AppOptions

MARKER = "FIRST-FRAME-DRAWN"
BUSY_APP = textwrap.dedent(
    f"""
    import sys, time
    from textual.app import App
    from textual.drivers.linux_driver import LinuxDriver
    from textual.widgets import Static
    from ohtui.tui.app import frame_handover

    frame_handover.HANDOVER_WAIT = 30.0  # the mechanism, whatever the machine's load
    sys.setswitchinterval(5.0)  # a thread waiting for the GIL waits as long as it is held
    driver, record = sys.argv[1], sys.argv[2]

    class Busy(App):
        def compose(self):
            yield Static("{MARKER}")

        def post_display_hook(self):
            if getattr(self, "busy", None) is None:
                self.busy = time.monotonic()  # the UI thread goes on, the GIL held
                while (done := time.monotonic()) - self.busy < 0.5:
                    pass
                with open(record, "w") as file:
                    file.write(f"{{self.busy}} {{done}}")
                self.exit()

    Busy(driver_class=frame_handover.HandoverDriver if driver == "handover" else LinuxDriver).run()
    """
)


def first_frame(tmp_path: Path, driver: str) -> tuple[float, float, float]:
    """When the marker reached the terminal, and when the UI thread's busy half second
    after the first frame began and ended (one clock: CLOCK_MONOTONIC)."""
    script, record = tmp_path / "busy.py", tmp_path / f"{driver}.times"
    script.write_text(BUSY_APP)
    run = run_on_pty(
        [sys.executable, str(script), driver, str(record)], marker=MARKER.encode(), timeout=30
    )
    assert run.marker_at is not None, run.output[-500:]
    busy, done = (float(part) for part in record.read_text().split())
    return run.marker_at, busy, done


def test_the_frame_is_on_the_terminal_before_the_ui_thread_goes_on(tmp_path: Path) -> None:
    """Read here within a few milliseconds of the UI thread's first frame, it is in the
    half second the UI thread then keeps the GIL."""
    arrived, busy, done = first_frame(tmp_path, "handover")
    assert arrived < busy + 0.25 < done


def test_textuals_own_driver_leaves_the_frame_waiting_for_the_gil(tmp_path: Path) -> None:
    """What the handover is for (and proof the test above can fail)."""
    arrived, _, done = first_frame(tmp_path, "stock")
    assert arrived >= done


@pytest.mark.anyio
async def test_the_wait_is_bounded_and_skipped_while_the_writer_is_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A terminal that does not take the frame (its writer never writes) holds the UI
    thread for HANDOVER_WAIT once, then not at all until the writer catches up."""
    monkeypatch.setattr(frame_handover, "HANDOVER_WAIT", 0.5)
    driver = HandoverDriver(App())  # (a driver is made in a running event loop)
    driver._queued = 3  # three writes queued, none written: a stuck writer
    started = time.monotonic()
    driver.flush()
    waited = time.monotonic() - started
    driver._queued = 6
    started = time.monotonic()
    driver.flush()
    assert 0.4 < waited < 5
    assert time.monotonic() - started < 0.25


@pytest.mark.anyio
async def test_setting_the_terminal_up_waits_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sequences that set the terminal up are not frames: the first frame does not wait
    behind them (a writer thread just started took up to 2 ms for each)."""
    monkeypatch.setattr(frame_handover, "HANDOVER_WAIT", 0.5)

    def set_up(driver: LinuxDriver) -> None:  # Textual's writes and flushes, no terminal
        driver._writer_thread = WriterThread(io.StringIO())  # never started: never writes
        driver.write("\x1b[?1049h")
        driver.flush()

    monkeypatch.setattr(LinuxDriver, "start_application_mode", set_up)
    driver = HandoverDriver(App())  # its writer never writes
    started = time.monotonic()
    driver.start_application_mode()
    assert time.monotonic() - started < 0.25
    assert not driver._starting


@pytest.mark.anyio
async def test_the_first_frame_waits_even_when_the_set_up_is_not_written_yet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The set-up sequences still queued are not a frame the writer is behind on: the first
    frame waits for them and itself. (On a loaded machine the writer thread had not run yet
    when the first frame was drawn, which then skipped its wait as behind a slow terminal.)"""
    monkeypatch.setattr(frame_handover, "HANDOVER_WAIT", 0.5)

    def set_up(driver: LinuxDriver) -> None:  # Textual's writes and flushes, no terminal
        driver._writer_thread = WriterThread(io.StringIO())  # never started: never writes
        for sequence in ("\x1b[?1049h", "\x1b[?1000h", "\x1b[?25l"):
            driver.write(sequence)
        driver.flush()

    monkeypatch.setattr(LinuxDriver, "start_application_mode", set_up)
    driver = HandoverDriver(App())
    driver.start_application_mode()
    driver.write("the first frame")
    started = time.monotonic()
    driver.flush()
    assert 0.4 < time.monotonic() - started < 5


def test_ohtui_runs_on_it_where_textual_would_use_its_linux_driver(tmp_path: Path) -> None:
    app = OhtuiApp(AppOptions(workspace=tmp_path, history_file=tmp_path / "history"))
    textuals = App().driver_class  # (LinuxDriver here, unless TEXTUAL_DRIVER names another)
    assert app.driver_class is (HandoverDriver if textuals is LinuxDriver else textuals)
    assert issubclass(HandoverDriver, LinuxDriver)
