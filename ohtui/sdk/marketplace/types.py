"""A marketplace: a repository's `.plugin/marketplace.json`, listing plugins and skills.

Only the listing is read here; installing what it lists is the skills' job
(`install_skills_from_marketplace`), which fetches remote sources through the git cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

MARKETPLACE_MANIFEST_DIRS = (".plugin", ".claude-plugin")
"""Where a marketplace's manifest may be, under its root, the first found winning."""
MARKETPLACE_MANIFEST_FILE = "marketplace.json"


class MarketplaceError(ValueError):
    """A marketplace manifest that cannot be used; the message names the file and the fault."""


class MarketplaceOwner(BaseModel):
    """Who keeps the marketplace."""

    name: str = Field(description="The maintainer or team.")
    email: str | None = Field(default=None, description="How to reach them.")


class MarketplaceAuthor(BaseModel):
    """Who wrote an entry; 'Name <email>' is read into its parts."""

    name: str = Field(default="", description="The author's name.")
    email: str | None = Field(default=None, description="The author's email address.")
    url: str | None = Field(default=None, description="A page about the author.")

    @classmethod
    def from_string(cls, text: str) -> MarketplaceAuthor:
        """'Name <email>' or a bare name."""
        name, _, rest = text.partition("<")
        email = rest.split(">", 1)[0].strip() if rest else None
        return cls(name=name.strip(), email=email or None)


class MarketplacePluginSource(BaseModel):
    """A plugin's source given as an object: a GitHub repository or any git URL."""

    model_config = ConfigDict(extra="allow")

    source: str = Field(description="'github' or 'url'.")
    repo: str | None = Field(default=None, description="'owner/repo', for 'github'.")
    url: str | None = Field(default=None, description="The git URL, for 'url'.")
    ref: str | None = Field(default=None, description="Branch, tag or commit.")
    path: str | None = Field(default=None, description="A folder inside the repository.")


class MarketplaceEntry(BaseModel):
    """A skill (or plugin) the marketplace lists: a folder, local or remote."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str = Field(description="Its name (kebab-case).")
    source: str = Field(
        description="Its folder: a path (relative to the marketplace), a file:// URL, or "
        "https://github.com/<owner>/<repo>/blob/<branch>/<path>."
    )
    description: str | None = Field(default=None, description="One line on what it is for.")
    version: str | None = Field(default=None, description="Its version.")
    author: MarketplaceAuthor | None = Field(default=None, description="Who wrote it.")
    category: str | None = Field(default=None, description="A category to group it by.")
    homepage: str | None = Field(default=None, description="Where it is documented.")

    @field_validator("author", mode="before")
    @classmethod
    def _author_text(cls, value: Any) -> Any:
        return MarketplaceAuthor.from_string(value) if isinstance(value, str) else value


class MarketplacePluginEntry(MarketplaceEntry):
    """A plugin the marketplace lists; its source may also be a git source object."""

    source: str | MarketplacePluginSource = Field(  # type: ignore[assignment]
        description="Its folder, or a {'source': 'github'|'url', ...} object."
    )


class MarketplaceMetadata(BaseModel):
    """Optional extra facts about the marketplace."""

    model_config = ConfigDict(extra="allow")

    description: str | None = None
    version: str | None = None


class Marketplace(BaseModel):
    """A listing of plugins and skills (Claude Code's marketplace.json, plus `skills`)."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(description="Its name (kebab-case).")
    owner: MarketplaceOwner = Field(description="Who keeps it.")
    description: str | None = Field(default=None, description="One line on what it offers.")
    plugins: list[MarketplacePluginEntry] = Field(default_factory=list)
    skills: list[MarketplaceEntry] = Field(default_factory=list)
    metadata: MarketplaceMetadata | None = None
    path: str | None = Field(default=None, description="Its root folder, once loaded.")

    @classmethod
    def load(cls, marketplace_path: str | Path) -> Marketplace:
        """Read the marketplace rooted at `marketplace_path`.

        FileNotFoundError when the folder or its manifest is missing; MarketplaceError (a
        ValueError) when the manifest is not valid JSON or not a marketplace.
        """
        root = Path(marketplace_path).expanduser().resolve()
        if not root.is_dir():
            raise FileNotFoundError(f"Marketplace directory not found: {root}")
        manifest = next(
            (
                root / d / MARKETPLACE_MANIFEST_FILE
                for d in MARKETPLACE_MANIFEST_DIRS
                if (root / d / MARKETPLACE_MANIFEST_FILE).is_file()
            ),
            None,
        )
        if manifest is None:
            where = " or ".join(
                f"{d}/{MARKETPLACE_MANIFEST_FILE}" for d in MARKETPLACE_MANIFEST_DIRS
            )
            raise FileNotFoundError(f"Marketplace manifest not found: expected {where} in {root}")
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MarketplaceError(f"{manifest}: not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise MarketplaceError(f"{manifest}: must be a JSON object, not {type(data).__name__}")
        try:
            return cls.model_validate({**data, "path": str(root)})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise MarketplaceError(f"{manifest}: '{where}': {first['msg']}") from exc

    def get_plugin(self, name: str) -> MarketplacePluginEntry | None:
        """The plugin entry called `name`, if listed."""
        return next((p for p in self.plugins if p.name == name), None)

    def get_skill(self, name: str) -> MarketplaceEntry | None:
        """The skill entry called `name`, if listed."""
        return next((s for s in self.skills if s.name == name), None)
