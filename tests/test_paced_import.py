"""A paced import stops before each module it loads, on its own thread only, and hands the
GIL back sooner while it runs."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.paced_import import SWITCH_INTERVAL, paced_imports


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    """A package of three modules, the first importing the other two."""
    name = f"paced_pkg_{tmp_path.name.replace('-', '_')}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("from . import one, two\n")
    (root / "one.py").write_text("VALUE = 1\n")
    (root / "two.py").write_text("VALUE = 2\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield name
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m.split(".")[0] == name]:
            del sys.modules[module]


def test_each_module_imported_on_the_thread_waits_for_pause_first(package: str) -> None:
    paused: list[set[str]] = []
    before = sys.getswitchinterval()

    def pause() -> None:
        paused.append({m for m in sys.modules if m.startswith(package)})

    with paced_imports(pause):
        assert sys.getswitchinterval() == min(before, SWITCH_INTERVAL)
        module = importlib.import_module(package)
    # Before the package, then before each of its modules: never in the middle of one.
    assert paused == [set(), {package}, {package, f"{package}.one"}]
    assert module.two.VALUE == 2
    assert sys.getswitchinterval() == before
    assert not any(type(f).__name__ == "_Pacer" for f in sys.meta_path)


def test_other_threads_imports_are_not_paused(package: str) -> None:
    paused: list[str] = []
    with paced_imports(lambda: paused.append(threading.current_thread().name)):
        other = threading.Thread(target=importlib.import_module, args=(package,), name="other")
        other.start()
        other.join(10)
    assert package in sys.modules
    assert paused == []
