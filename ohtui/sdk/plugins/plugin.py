"""Plugin: what one plugin folder brings (skills, MCP server settings, hooks).

The layout is Claude Code's, which the OpenHands SDK reads too::

    my-plugin/
    ├── .plugin/plugin.json      (or .claude-plugin/plugin.json: name, version, description)
    ├── skills/                  (skill files, as in a project's .agents/skills/)
    ├── hooks/hooks.json         (hooks, as in .openhands/hooks.json; ${CLAUDE_PLUGIN_ROOT}
    │                             in a command is this folder)
    └── .mcp.json                ({"mcpServers": {name: settings}}; ${CLAUDE_PLUGIN_ROOT}
                                  in any of its values is this folder)

Every part is optional; a part that is present but broken is a PluginLoadError naming the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ohtui.sdk.context.skills.loader import read_skills_dir
from ohtui.sdk.context.skills.skill import Skill
from ohtui.sdk.hooks.config import HookConfig, HookConfigError, HookDefinition

T = TypeVar("T")
MANIFEST_PATHS = (".plugin/plugin.json", ".claude-plugin/plugin.json")
ROOT_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "PLUGIN_ROOT")
"""Written in a hook's command, each stands for the plugin's folder."""


class PluginLoadError(ValueError):
    """A plugin folder whose contents cannot be used; the message names the file."""


@dataclass
class Plugin:
    """One loaded plugin."""

    name: str
    path: Path
    version: str | None = None
    description: str | None = None
    skills: list[Skill] = field(default_factory=list)
    mcp_config: dict[str, Any] = field(default_factory=dict)
    hooks: HookConfig | None = None
    warnings: list[str] = field(default_factory=list)
    """Skill files in it that could not be read (each skipped)."""
    source: str = ""
    """Where it came from: its folder (resolved), or a git URL without credentials or
    `github:o/r` with its folder in the repository (`#plugins/x`); set by `load_plugins`."""
    commit: str | None = None
    """The commit it was loaded at (git sources); set by `load_plugins`."""

    @classmethod
    def load(cls, path: str | Path) -> Plugin:
        """Read the plugin in folder `path`."""
        root = Path(path)
        if not root.is_dir():
            raise PluginLoadError(f"plugin folder {root} does not exist")
        manifest = _manifest(root)
        skills = read_skills_dir(root / "skills")
        return cls(
            name=str(manifest.get("name") or root.name),
            path=root,
            version=_optional_text(manifest, "version"),
            description=_optional_text(manifest, "description"),
            skills=list(skills.skills.values()),
            mcp_config=_mcp_servers(root / ".mcp.json", root),
            hooks=_hooks(root / "hooks" / "hooks.json", root),
            warnings=skills.warnings,
        )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PluginLoadError(f"{path} line {exc.lineno}: not valid JSON ({exc.msg})") from exc
    except UnicodeDecodeError as exc:
        raise PluginLoadError(f"{path}: not UTF-8 text") from exc
    except OSError as exc:
        raise PluginLoadError(f"{path}: cannot read it ({exc.strerror or exc})") from exc


def _manifest(root: Path) -> dict[str, Any]:
    for relative in MANIFEST_PATHS:
        path = root / relative
        if path.is_file():
            data = _read_json(path)
            if not isinstance(data, dict):
                raise PluginLoadError(f"{path}: must be a JSON object with the plugin's name")
            return data
    return {}


def _optional_text(manifest: dict[str, Any], key: str) -> str | None:
    value = manifest.get(key)
    return None if value is None else str(value)


def _mcp_servers(path: Path, root: Path) -> dict[str, Any]:
    """The plugin's MCP servers, `${CLAUDE_PLUGIN_ROOT}` / `${PLUGIN_ROOT}` in any of their
    values standing for the plugin's folder (so a server can run a script the plugin ships)."""
    if not path.is_file():
        return {}
    data = _read_json(path)
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise PluginLoadError(f'{path}: must be {{"mcpServers": {{"<name>": {{...settings...}}}}}}')
    return {name: _in_plugin(_rooted(spec, root), root) for name, spec in servers.items()}


def _in_plugin(spec: dict[str, Any], root: Path) -> dict[str, Any]:
    """A stdio server starts in the plugin's folder (its `cwd` within it): a relative path
    in its command line means a file the plugin ships, never one of the workspace."""
    if "command" not in spec:
        return spec
    cwd = spec.get("cwd")
    if cwd is None or (isinstance(cwd, str) and not Path(cwd).is_absolute()):
        return {**spec, "cwd": str(root / cwd) if cwd else str(root)}
    return spec


def _rooted(value: T, root: Path) -> T:
    """`value` with the plugin-root variables in every string replaced by `root`."""
    if isinstance(value, str):
        for name in ROOT_VARIABLES:
            value = value.replace(f"${{{name}}}", str(root))  # type: ignore[assignment]
        return value
    if isinstance(value, dict):
        return {k: _rooted(v, root) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [_rooted(v, root) for v in value]  # type: ignore[return-value]
    return value


def _hooks(path: Path, root: Path) -> HookConfig | None:
    """The plugin's hooks, `${CLAUDE_PLUGIN_ROOT}` / `${PLUGIN_ROOT}` in their commands
    standing for the plugin's folder (so a hook can run a script the plugin ships)."""
    if not path.is_file():
        return None
    try:
        config = HookConfig.load(path)
    except HookConfigError as exc:
        raise PluginLoadError(str(exc)) from exc
    if config.is_empty():
        return None

    def rooted(hook: HookDefinition) -> HookDefinition:
        if not hook.command:
            return hook
        return hook.model_copy(update={"command": _rooted(hook.command, root)})

    return HookConfig.model_validate(
        {
            name: [
                matcher.model_copy(update={"hooks": [rooted(h) for h in matcher.hooks]})
                for matcher in getattr(config, name)
            ]
            for name in HookConfig.model_fields
        }
    )
