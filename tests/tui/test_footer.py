"""CoveredFooter: its keys are not rebuilt while a full screen covers its screen.

It overrides Textual's `Footer.bindings_changed` (8.2): if Textual stops rebuilding the footer
through it, the first test fails and the override can go.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from ohtui.tui.widgets.footer import CoveredFooter

pytestmark = pytest.mark.anyio


class Counted(CoveredFooter):
    """Counts how often its keys are built."""

    builds = 0

    def compose(self) -> ComposeResult:
        Counted.builds += 1
        yield from super().compose()


class Base(Screen[None]):
    BINDINGS = [Binding("ctrl+t", "nothing", "Base key")]

    def compose(self) -> ComposeResult:
        yield Static("base")
        yield Counted()


class Cover(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("cover")


class Dialog(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static("dialog")


class Host(App[None]):
    def on_mount(self) -> None:
        self.push_screen(Base())


async def test_the_keys_are_rebuilt_when_shown_not_while_covered() -> None:
    app = Host()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        base = app.screen
        footer = base.query_one(Counted)
        assert footer.query("FooterKey")  # the keys are there
        for covering, rebuilt in ((Cover, False), (Dialog, True)):
            await pilot.pause()
            before = Counted.builds
            await app.push_screen(covering())
            await pilot.pause()
            await pilot.pause()
            assert (Counted.builds > before) is rebuilt, covering.__name__
            before = Counted.builds
            app.pop_screen()
            await pilot.pause()
            await pilot.pause()
            assert app.screen is base
            assert Counted.builds > before  # shown again: its keys are rebuilt
            assert footer.query("FooterKey")


async def test_a_plain_footer_is_rebuilt_while_covered() -> None:
    """What CoveredFooter saves: Textual's Footer rebuilds its keys under a full screen."""
    builds: list[int] = []

    class Plain(Footer):
        def compose(self) -> ComposeResult:
            builds.append(1)
            yield from super().compose()

    class PlainBase(Base):
        def compose(self) -> ComposeResult:
            yield Static("base")
            yield Plain()

    class PlainHost(App[None]):
        def on_mount(self) -> None:
            self.push_screen(PlainBase())

    app = PlainHost()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        await pilot.pause()
        before = len(builds)
        await app.push_screen(Cover())
        await pilot.pause()
        await pilot.pause()
        assert len(builds) > before
