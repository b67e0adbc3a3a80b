"""Finding agent definition files: `.agents/agents` and `.openhands/agents`, in the project
and in the user's home, the first definition of a name winning.

Priority, highest first: agents registered in code, plugins' agents, the project's
`.agents/agents`, its `.openhands/agents`, the user's `~/.agents/agents`, `~/.openhands/agents`.
Only the top-level `*.md` files of a folder are read, README.md aside; a file that cannot
be read is skipped with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from ohtui.sdk.subagent.schema import AgentDefinition, AgentDefinitionError

logger = logging.getLogger(__name__)

AGENT_DIRS: Final[tuple[str, ...]] = (".agents/agents", ".openhands/agents")
"""Where agent files are looked for under a project or the home folder, first wins."""
_SKIPPED: Final[frozenset[str]] = frozenset({"README.md", "readme.md"})


def load_agents_from_dir(agents_dir: str | Path) -> list[AgentDefinition]:
    """The agent definitions of a folder's top-level `.md` files, in name order.

    A missing folder gives none; a file that cannot be read is logged and skipped.
    """
    folder = Path(agents_dir)
    if not folder.is_dir():
        return []
    found: list[AgentDefinition] = []
    for path in sorted(folder.iterdir()):
        if path.is_dir() or path.suffix.lower() != ".md" or path.name in _SKIPPED:
            continue
        try:
            found.append(AgentDefinition.load(path))
        except AgentDefinitionError as exc:
            logger.warning("skipping an agent definition: %s", exc)
    return found


def _first_of_each_name(definitions: Iterable[AgentDefinition]) -> list[AgentDefinition]:
    seen: set[str] = set()
    kept: list[AgentDefinition] = []
    for definition in definitions:
        if definition.name not in seen:
            seen.add(definition.name)
            kept.append(definition)
    return kept


def _load_from_dirs(dirs: Iterable[Path]) -> list[AgentDefinition]:
    return _first_of_each_name(d for folder in dirs for d in load_agents_from_dir(folder))


def load_project_agents(project_dir: str | Path) -> list[AgentDefinition]:
    """The project's agents (`.agents/agents` before `.openhands/agents`)."""
    root = Path(project_dir)
    return _load_from_dirs(root / d for d in AGENT_DIRS)


def load_user_agents() -> list[AgentDefinition]:
    """The user's agents (`~/.agents/agents` before `~/.openhands/agents`)."""
    home = Path.home()
    return _load_from_dirs(home / d for d in AGENT_DIRS)


def discover_agents(
    project_dir: str | Path | None,
    *,
    include_project: bool = True,
    include_user: bool = True,
) -> list[AgentDefinition]:
    """The project's and user's agents with their `level` set, without registering any;
    the project's win a name found in both."""
    found: list[AgentDefinition] = []
    if include_project and project_dir is not None:
        found += [
            d.model_copy(update={"level": "project"}) for d in load_project_agents(project_dir)
        ]
    if include_user:
        found += [d.model_copy(update={"level": "user"}) for d in load_user_agents()]
    return _first_of_each_name(found)
