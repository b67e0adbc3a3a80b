"""Profile: the user's settings and secrets for one run of ohtui, loaded once, shared by
every screen (and by headless runs).

Loading blocks (it reads config.toml and asks the OS keyring, which may take seconds when
it is locked): front ends call `load` off their UI thread.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.settings import paths
from ohtui.settings.overrides import Key, Override

if TYPE_CHECKING:
    from ohtui.sdk.security import ApprovalRule
    from ohtui.sdk.utils.cipher import Cipher
    from ohtui.settings.config_file import ConfigFile, LoadedConfig
    from ohtui.settings.schema import Settings
    from ohtui.settings.secrets import KeyringStatus, ResolvedKey, SecretStore

logger = logging.getLogger(__name__)


class Profile:
    """config.toml with this run's overrides, and where secrets are kept."""

    def __init__(
        self,
        config_path: Path | None,
        overrides: Mapping[Key, Override] | None = None,
        *,
        use_keyring: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config_path = config_path
        """config.toml; None: no file (every default, nothing saved)."""
        self.overrides = dict(overrides or {})
        self.use_keyring = use_keyring
        self.environ = os.environ if environ is None else environ
        self._lock = threading.RLock()
        self._loaded: LoadedConfig | None = None
        self._settings: Settings | None = None
        self._secrets: SecretStore | None = None
        self._early: tuple[str, dict[str, Any]] | None = None
        """config.toml's text and its parsed values, as `early_value` last read them."""
        self.memory_chosen = False
        """The user agreed to keep secrets in memory for this run (no keyring works)."""
        self.problem: str | None = None
        """What is wrong with config.toml or an override, for the user; None when all is well."""
        self.override_problem: str | None = None
        """What is wrong with an environment variable or a flag (None: nothing). Unlike a
        broken file, whose valid part still applies, this is a mistake in this very run."""

    # --- loading --------------------------------------------------------------------------

    def load(self) -> Profile:
        """Read config.toml and find the keyring (once; later calls return at once)."""
        self.load_settings()
        with self._lock:
            if self._secrets is None:
                self._secrets = self._open_secrets()
        return self

    def load_settings(self) -> Profile:
        """Read config.toml only (the keyring can take longer: `load` asks it)."""
        with self._lock:
            if self._settings is None:
                self._load_settings()
        return self

    @property
    def is_loaded(self) -> bool:
        """Whether `load` has finished (so reading settings will not block)."""
        return self._settings is not None and self._secrets is not None

    def _load_settings(self) -> None:
        from ohtui.settings.config_file import LoadedConfig
        from ohtui.settings.schema import Settings

        config = self.config_file
        self._apply(config.load() if config is not None else LoadedConfig(Settings()))

    def _apply(self, loaded: LoadedConfig) -> None:
        """Put what was read in force, with this run's overrides on top."""
        from ohtui.settings.overrides import OverrideError, apply_overrides

        self._loaded = loaded
        problems = [str(loaded.error)] if loaded.error else []
        try:
            self._settings = apply_overrides(loaded.settings, self.overrides)
        except OverrideError as exc:
            problems.append(str(exc))
            self._settings = loaded.settings
            self.override_problem = str(exc)
        else:
            self.override_problem = None
        self.problem = "\n".join(problems) or None

    def _open_secrets(self) -> SecretStore:
        from ohtui.settings.secrets import SecretStore, probe_keyring

        if not self.use_keyring:
            return SecretStore.in_memory()
        return SecretStore(probe_keyring())

    # --- what was loaded ------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings in force: config.toml, then the environment, then flags."""
        self.load_settings()
        assert self._settings is not None
        return self._settings

    @property
    def saved(self) -> Settings:
        """The settings as config.toml has them (what the settings screen edits)."""
        self.load_settings()
        assert self._loaded is not None
        return self._loaded.settings.model_copy(deep=True)

    @property
    def loaded(self) -> LoadedConfig:
        """What reading config.toml gave (its error and warnings)."""
        self.load_settings()
        assert self._loaded is not None
        return self._loaded

    @property
    def secrets(self) -> SecretStore:
        """Where API keys and user secrets are kept for this run."""
        self.load()
        assert self._secrets is not None
        return self._secrets

    @property
    def keyring(self) -> KeyringStatus:
        """Whether the OS keyring works."""
        return self.secrets.status

    @property
    def conversations_dir(self) -> Path:
        """Where conversations are saved.

        Before the settings are loaded, the one key is read straight from the file (a
        resumed conversation's history is shown before the whole file is validated); an
        invalid value means the default, as full validation would decide.
        """
        if self._settings is not None:
            return self.settings.storage.conversations_dir or paths.conversations_dir()
        value = self.early_value("storage", "conversations_dir")
        if isinstance(value, str) and value.strip():
            return Path(value).expanduser()
        return paths.conversations_dir()

    def early_value(self, table: str, key: str) -> object:
        """A setting as this run's overrides or config.toml give it, unvalidated (None:
        not set, or unreadable): for what must be known before the settings load (before
        the first frame, where loading a TOML parser costs a few milliseconds: a file that
        names neither the key nor any escape cannot set it, and is not parsed; a file is
        parsed once however many values are read from it)."""
        override = self.overrides.get((table, key))
        if override is not None:
            return override.value
        if self.config_path is None:
            return None
        try:
            text = paths.config_text(self.config_path)
        except OSError:
            return None
        if key not in text and "\\" not in text:  # a quoted key may spell it with escapes
            return None
        if self._early is None or self._early[0] != text:
            import tomllib

            try:
                self._early = (text, tomllib.loads(text))
            except tomllib.TOMLDecodeError:
                return None
        section = self._early[1].get(table)
        return section.get(key) if isinstance(section, dict) else None

    @property
    def config_file(self) -> ConfigFile | None:
        """config.toml, to write to (None: this run has no file)."""
        from ohtui.settings.config_file import ConfigFile

        return ConfigFile(self.config_path) if self.config_path else None

    # --- secrets --------------------------------------------------------------------------

    def use_memory_secrets(self) -> None:
        """Keep secrets in memory for this run only (the user's choice when no keyring works)."""
        from ohtui.settings.secrets import SecretStore

        with self._lock:
            if self._secrets is None or self._secrets.persistent:
                self._secrets = SecretStore.in_memory()
            self.memory_chosen = True

    def api_key(self, model: str) -> ResolvedKey:
        """The API key for `model`: an environment variable, else the store (or none)."""
        from ohtui.settings.secrets import ResolvedKey, SecretStoreError, resolve_api_key

        try:
            return resolve_api_key(model, self.secrets, self.environ)
        except SecretStoreError as exc:
            logger.warning("API key not read from the keyring: %s", exc)
            return ResolvedKey(None, "none")

    def server_key(self, url: str) -> ResolvedKey:
        """The session API key of the agent server at `url`: OHTUI_SERVER_API_KEY, else the
        keyring's entry for that server, else the key `ohtui serve` made on this machine
        (for a server on loopback that this user runs), or none."""
        from ohtui.settings.local_server import LOCAL_SERVER, local_session_key
        from ohtui.settings.secrets import SERVER_KEY_ENV, ResolvedKey, SecretStoreError

        if self.environ.get(SERVER_KEY_ENV):
            return ResolvedKey(self.environ[SERVER_KEY_ENV], SERVER_KEY_ENV)
        try:
            saved = self.secrets.server_key(url)
        except SecretStoreError as exc:
            logger.warning("server key not read from the keyring: %s", exc)
            saved = None
        if saved:
            return ResolvedKey(saved, "keyring")
        local = local_session_key(url)
        return ResolvedKey(local, LOCAL_SERVER) if local else ResolvedKey(None, "none")

    def user_secrets(self) -> dict[str, str]:
        """The secrets the user defined, for the agent's commands ({} if unreadable)."""
        from ohtui.settings.secrets import SecretStoreError

        try:
            return self.secrets.user_secrets()
        except SecretStoreError as exc:
            logger.warning("user secrets not read: %s", exc)
            return {}

    def cipher(self) -> Cipher | None:
        """The cipher that encrypts secrets in saved conversations (None: they are redacted)."""
        from ohtui.settings.secrets import SecretStoreError

        try:
            key = self.secrets.cipher_key()
        except SecretStoreError as exc:
            logger.warning("no cipher key: %s", exc)
            return None
        if key is None:
            return None
        from ohtui.sdk.utils.cipher import Cipher

        return Cipher(key)

    # --- saving ---------------------------------------------------------------------------

    def save(self, settings: Settings) -> None:
        """Write `settings` to config.toml (atomically) and put them in force."""
        from ohtui.settings.config_file import LoadedConfig

        config = self.config_file
        with self._lock:
            if config is None:
                self._apply(LoadedConfig(settings))
                return
            config.save(settings)
            self._apply(config.load())

    def user_rules(self) -> list[ApprovalRule]:
        """The approval rules of scope user, read from config.toml now."""
        config = self.config_file
        if config is None:
            return list(self.settings.confirmation.rules)
        return list(config.load().settings.confirmation.rules)

    def set_user_rules(self, rules: list[ApprovalRule]) -> None:
        """Replace the approval rules of scope user in config.toml."""
        config = self.config_file

        def change(settings: Settings) -> None:
            settings.confirmation.rules = rules

        with self._lock:
            if config is None:
                change(self.settings)
                return
            config.update(change)
            self._load_settings()
