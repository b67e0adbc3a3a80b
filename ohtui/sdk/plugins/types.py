"""PluginSource (where a plugin comes from) and ResolvedPluginSource (the version used)."""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["PluginSource", "ResolvedPluginSource", "redact_url_credentials"]


def redact_url_credentials(url: str) -> str:
    """`url` without the credentials in it (see ohtui.sdk.utils.git_cache, imported on use:
    a conversation without plugins never loads the git cache)."""
    from ohtui.sdk.utils.git_cache import redact_url_credentials as redact

    return redact(url)


class PluginSource(BaseModel):
    """A plugin to load: `github:owner/repo`, a git URL, or a local directory."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    source: str = Field(description="'github:owner/repo', any git URL, or a local path.")
    ref: str | None = Field(
        default=None, description="Branch, tag or commit to use (git sources only)."
    )
    repo_path: str | None = Field(
        default=None, description="The plugin's folder inside the repository (monorepos)."
    )

    @field_validator("source")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a plugin source is 'github:owner/repo', a git URL or a path")
        return value.strip()

    @field_validator("repo_path")
    @classmethod
    def _inside_the_repository(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = PurePosixPath(value)
        if path.is_absolute():
            raise ValueError(f"repo_path must be relative to the repository, not {value!r}")
        if ".." in path.parts:
            raise ValueError(f"repo_path may not leave the repository ('..' in {value!r})")
        return value


class ResolvedPluginSource(BaseModel):
    """A plugin source pinned to the commit actually used, so a resume loads the same one."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    source: str = Field(description="The source, with any credentials in its URL redacted.")
    resolved_ref: str | None = Field(
        default=None, description="The commit used (git sources); None for local paths."
    )
    repo_path: str | None = Field(default=None, description="The folder inside the repository.")
    original_ref: str | None = Field(default=None, description="The ref the user asked for.")

    @classmethod
    def from_plugin_source(
        cls, plugin_source: PluginSource, resolved_ref: str | None
    ) -> ResolvedPluginSource:
        """Record `plugin_source` as loaded at `resolved_ref`."""
        return cls(
            source=redact_url_credentials(plugin_source.source),
            resolved_ref=resolved_ref,
            repo_path=plugin_source.repo_path,
            original_ref=plugin_source.ref,
        )

    def to_plugin_source(self) -> PluginSource:
        """The source pinned to the resolved commit."""
        return PluginSource(source=self.source, ref=self.resolved_ref, repo_path=self.repo_path)

    def matches(self, plugin_source: PluginSource) -> bool:
        """Whether this records `plugin_source` (the same source, ref and folder)."""
        return (
            self.source == redact_url_credentials(plugin_source.source)
            and self.original_ref == plugin_source.ref
            and self.repo_path == plugin_source.repo_path
        )
