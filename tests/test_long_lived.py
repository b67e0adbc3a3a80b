"""`ohtui.long_lived`: what ohtui's programs import is frozen out of the collector's full
passes; in a program using the engine as a library, the collector is left alone."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui import long_lived


class Node:
    """Refers to itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing frozen during the test, and no automatic collection (which would free the
    test's garbage before it looks); afterwards, what the suite froze is frozen again."""
    monkeypatch.setattr(long_lived, "_own_program", False)
    monkeypatch.setattr(long_lived, "_start_held", False)
    monkeypatch.setattr(long_lived, "_holds", 0)
    frozen = gc.get_freeze_count()  # the suite's imports (tests/conftest.py)
    gc.unfreeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()
        if frozen:
            gc.collect()
            gc.freeze()


def test_a_library_user_s_collector_is_left_alone(unfrozen: None) -> None:
    kept = Node()
    long_lived.settle()
    assert gc.get_freeze_count() == 0
    assert any(o is kept for o in gc.get_objects())


def test_in_ohtui_s_programs_what_is_alive_is_frozen_and_young_garbage_freed_first(
    unfrozen: None,
) -> None:
    kept = Node()
    garbage = [weakref.ref(Node()) for _ in range(50)]  # unreachable, not yet collected
    assert any(ref() is not None for ref in garbage)
    long_lived.own_program()
    long_lived.settle()
    assert gc.get_freeze_count() > 0
    assert not any(o is kept for o in gc.get_objects())  # in the permanent generation
    assert all(ref() is None for ref in garbage)  # collected, not frozen forever


def test_a_library_user_s_thresholds_are_left_alone_during_a_large_import(unfrozen: None) -> None:
    before = gc.get_threshold()
    with long_lived.importing():
        assert gc.get_threshold() == before
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_no_full_pass_runs_while_ohtui_s_programs_import_then_all_is_as_before_and_settled(
    unfrozen: None,
) -> None:
    before = gc.get_threshold()
    long_lived.own_program()
    with long_lived.importing():
        young, older, full = gc.get_threshold()
        assert (young, older) == before[:2]  # the young generations are still collected
        assert full == long_lived.NO_FULL_PASS
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() > 0


def test_overlapping_imports_restore_the_threshold_when_the_last_ends_even_on_an_error(
    unfrozen: None,
) -> None:
    before = gc.get_threshold()
    long_lived.own_program()
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with long_lived.importing():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(10)
    with pytest.raises(ImportError), long_lived.importing():
        raise ImportError("a module that failed to import")
    assert gc.get_threshold()[2] == long_lived.NO_FULL_PASS  # the other import still runs
    release.set()
    thread.join(10)
    assert gc.get_threshold() == before


def test_a_library_user_s_collector_stays_on_through_start_up(unfrozen: None) -> None:
    gc.enable()
    long_lived.starting()
    assert gc.isenabled()
    long_lived.started()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_nothing_is_collected_while_ohtui_starts_then_it_is_frozen_and_collecting_again(
    unfrozen: None,
) -> None:
    gc.enable()
    long_lived.own_program()
    long_lived.starting()
    assert not gc.isenabled()
    garbage = [weakref.ref(Node()) for _ in range(5000)]  # enough to trigger collections
    assert all(ref() is not None for ref in garbage)
    kept = Node()
    long_lived.started()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
    assert not any(o is kept for o in gc.get_objects())  # frozen, not walked again
    long_lived.started()  # a second call changes nothing
    assert gc.isenabled()


def test_a_collector_someone_else_turned_off_stays_off(unfrozen: None) -> None:
    long_lived.own_program()
    assert not gc.isenabled()  # (off for the test: as a program might have it)
    long_lived.starting()
    long_lived.started()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_the_collector_is_on_again_when_the_app_fails_before_its_first_frame(
    unfrozen: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ohtui.tui.app
    from ohtui import cli

    class Broken:
        def __init__(self, options: object) -> None:
            assert not gc.isenabled()  # held from before the app's import
            raise RuntimeError("a start that failed")

    gc.enable()
    monkeypatch.setenv("OHTUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setattr(ohtui.tui.app, "OhtuiApp", Broken)
    monkeypatch.setattr(cli, "make_process_private", lambda: None)  # the test process's own
    with pytest.raises(RuntimeError, match="a start that failed"):
        cli.main(["-w", str(tmp_path), "--model", "openai/x"])
    assert gc.isenabled()


def test_a_library_user_s_collector_stays_on_while_a_screen_is_built(unfrozen: None) -> None:
    gc.enable()
    release = long_lived.holding()
    assert gc.isenabled()
    release()
    assert gc.isenabled()


def test_nothing_is_collected_while_a_screen_is_built_and_nothing_is_frozen_for_it(
    unfrozen: None,
) -> None:
    gc.enable()
    long_lived.own_program()
    release = long_lived.holding()
    assert not gc.isenabled()
    garbage = [weakref.ref(Node()) for _ in range(5000)]
    assert all(ref() is not None for ref in garbage)
    release()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert all(ref() is None for ref in garbage)  # collected as usual afterwards
    release()  # a second call (the safety timer's) changes nothing
    assert gc.isenabled()


def test_holds_overlap_the_collector_is_on_again_when_the_last_lets_go(unfrozen: None) -> None:
    gc.enable()
    long_lived.own_program()
    long_lived.starting()
    release = long_lived.holding()  # the picker, opened before the first frame (--resume)
    long_lived.started()
    assert gc.get_freeze_count() > 0
    assert not gc.isenabled()  # the picker still holds
    release()
    assert gc.isenabled()
    release_again = long_lived.holding()
    long_lived.starting()
    release_again()
    assert not gc.isenabled()  # start-up still holds
    long_lived.started()
    assert gc.isenabled()


def test_holds_taken_and_let_go_from_many_threads_at_once_leave_the_collector_on(
    unfrozen: None,
) -> None:
    gc.enable()
    long_lived.own_program()
    go = threading.Barrier(8)

    def screens() -> None:
        go.wait(10)
        for _ in range(200):
            release = long_lived.holding()
            release()
            release()  # the safety timer's call as well

    threads = [threading.Thread(target=screens) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert long_lived._holds == 0
    assert gc.isenabled()
