"""Plugin sources as config.toml writes them: "source" or "source#ref", or a table.

`[agent] plugins = ["~/my-plugin", "github:acme/tools#v1.2", { source = "...", ref = "main",
repo_path = "plugins/x" }]`. The string form is what the settings screen edits (comma-separated);
a table is needed only for `repo_path`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

REF_MARK = "#"
"""Separates a source from its ref in the string form ("github:acme/tools#v1.2")."""


class PluginEntry(BaseModel):
    """One plugin to load: where it is, and for git sources which ref and subfolder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="A folder, a git URL, or github:owner/repo.")
    ref: str | None = Field(default=None, description="Branch, tag or commit (git sources).")
    repo_path: str | None = Field(default=None, description="The plugin's folder in the repo.")

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            source, _, ref = value.strip().partition(REF_MARK)
            return {"source": source, "ref": ref.strip() or None}
        if isinstance(value, dict):
            return value
        raise ValueError(
            'expected "source", "source#ref" or a table { source = "...", ref = "..." }'
        )

    @model_validator(mode="after")
    def _not_blank(self) -> PluginEntry:
        source = self.source.strip()
        if not source:
            raise ValueError(
                "a plugin source is a folder, a git URL or github:owner/repo (found an empty one)"
            )
        if source != self.source:
            return self.model_copy(update={"source": source})
        return self

    @model_serializer(mode="plain")
    def _as_toml(self) -> str | dict[str, str]:
        if self.repo_path is None:
            return self.text
        table = {"source": self.source, "repo_path": self.repo_path}
        if self.ref:
            table["ref"] = self.ref
        return table

    @property
    def text(self) -> str:
        """The string form: "source" or "source#ref"."""
        return f"{self.source}{REF_MARK}{self.ref}" if self.ref else self.source


def parse_plugin_list(text: str) -> list[str]:
    """The entries of a comma-separated list as the settings screen shows it."""
    return [part.strip() for part in text.split(",") if part.strip()]
