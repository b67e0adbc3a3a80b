"""Print the shape of ohtui's import graph: rooms (packages), arrows between them, cycles.

A room is a package directory (its ``__init__`` and plain modules); top-level modules of
``ohtui`` count as rooms of their own. Every import counts, lazy ones inside functions too:
a lazy import hides a cycle from Python, not from the reader. A package's ``__init__``
re-exporting names of its own subpackages is its public face, not an arrow (as for
import-linter, a package contains its subpackages).

    python bench/import_graph.py [--sdk]   # --sdk: only rooms inside ohtui.sdk
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def room_of(module: str, packages: set[str]) -> str:
    """The innermost package holding ``module`` (a package is its own room)."""
    if module in packages:
        return module
    parent = module.rsplit(".", 1)[0]
    return module if parent == "ohtui" else parent


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runtime", action="store_true", help="leave out imports under TYPE_CHECKING"
    )
    parser.add_argument("--sdk", action="store_true", help="only rooms inside ohtui.sdk")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph("ohtui", cache_dir=None, exclude_type_checking_imports=args.runtime)
    modules = graph.modules
    packages = {m for m in modules if (ROOT / m.replace(".", "/") / "__init__.py").exists()}
    rooms = {room_of(m, packages) for m in modules}
    if args.sdk:
        rooms = {r for r in rooms if r.startswith("ohtui.sdk.") or r == "ohtui.sdk"}
    edges: dict[str, set[str]] = defaultdict(set)
    for module in modules:
        source = room_of(module, packages)
        for imported in graph.find_modules_directly_imported_by(module):
            if module in packages and imported.startswith(module + "."):
                continue  # a package's face re-exporting its own subpackage
            target = room_of(imported, packages)
            if source != target and source in rooms and target in rooms:
                edges[source].add(target)
    for room in rooms:
        edges.setdefault(room, set())
    components = strongly_connected(rooms, edges)
    cycles = [c for c in components if len(c) > 1]
    in_cycle = {r: i for i, c in enumerate(cycles) for r in c}
    back = [
        (s, t)
        for s, ts in edges.items()
        for t in ts
        if s in in_cycle and in_cycle.get(t) == in_cycle[s]
    ]
    arrows = sum(len(ts) for ts in edges.values())
    print(f"rooms: {len(rooms)}  arrows: {arrows}  arrows inside cycles: {len(back)}")
    print(f"cycles between rooms: {len(cycles)}")
    for cycle in cycles:
        print("  ", " ↔ ".join(r.removeprefix("ohtui.") for r in cycle))
    module_cycles = [
        c
        for c in strongly_connected(
            set(modules), {m: set(graph.find_modules_directly_imported_by(m)) for m in modules}
        )
        if len(c) > 1
    ]
    print(f"cycles between modules: {len(module_cycles)}")
    for cycle in module_cycles:
        shown = ", ".join(m.removeprefix("ohtui.") for m in cycle[:8])
        print(f"   {len(cycle)} modules: {shown}{' …' if len(cycle) > 8 else ''}")
    sizes = sorted(
        ((sum(1 for _ in p.open()), p.relative_to(ROOT)) for p in (ROOT / "ohtui").rglob("*.py")),
        reverse=True,
    )
    print("largest modules:")
    for lines, path in sizes[:8]:
        print(f"   {lines:5d}  {path}")


if __name__ == "__main__":
    main()
