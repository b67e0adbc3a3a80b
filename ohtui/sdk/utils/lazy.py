"""Names a package exports but imports only when first used (PEP 562)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, str], *, submodules: bool = False
) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `homes` is imported from the
    module `homes[name]` on first use, then kept in the package like an eager import.
    `submodules`: another name that is a subpackage or module of `package` (`sdk.event`
    after `import ohtui.sdk`) is imported too, as it was when the package imported it."""

    def load(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            if submodules and not name.startswith("_"):
                try:
                    return importlib.import_module(f"{package}.{name}")
                except ModuleNotFoundError as exc:
                    if exc.name != f"{package}.{name}":
                        raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return load
