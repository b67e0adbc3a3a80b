"""SettingsScreen: the model and its API key, the agent's secrets, and how ohtui behaves.

Also the first-run screen, when no model is configured. Settings go to config.toml (atomic,
keeping keys it does not know); the API key and secrets go to the OS keyring, or, when none
works and the user agrees, to memory for this session. Everything that blocks (the keyring,
the model list, the test call) runs on threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Select, Static

from ohtui.settings.catalog import CUSTOM, FEATURED, provider_label
from ohtui.settings.choices import ConfirmationPolicy, ContextStrategy
from ohtui.settings.plugins import parse_plugin_list
from ohtui.tui.display import short_path
from ohtui.tui.widgets.engine_import import load_engine
from ohtui.tui.widgets.marked_choices import MarkedSelect
from ohtui.tui.widgets.model_input import ModelInput
from ohtui.tui.widgets.secrets_editor import SecretsEditor
from ohtui.tui.widgets.setting_rows import (
    BEHAVIOUR,
    CONTEXT,
    SettingError,
    SettingField,
    choices_of,
    collect,
    make_row,
    read_row,
)

if TYPE_CHECKING:
    from ohtui.settings.catalog import Catalog
    from ohtui.settings.profile import Profile
    from ohtui.settings.schema import Settings


_CONDENSER = ContextStrategy.SUMMARIZING_CONDENSER
_WINDOW = ContextStrategy.SLIDING_WINDOW
_SUMMARIZING = ContextStrategy.SUMMARIZING_MANAGER
CONTEXT_ROWS_FOR: dict[str, set[ContextStrategy]] = {
    "threshold": {_CONDENSER, _WINDOW, _SUMMARIZING},
    "max_size": {_CONDENSER},
    "keep_first": {_CONDENSER},
    "window_size": {_WINDOW},
    "summary_ratio": {_SUMMARIZING},
    "preserve_recent_messages": {_SUMMARIZING},
}
"""The context rows shown only for some strategies (the others are always shown)."""
PLUGINS = SettingField("agent", "plugins")


@dataclass
class _Loaded:
    """What the screen reads off the UI thread when it opens."""

    catalog: Catalog
    saved_key: bool
    key_source: str
    secrets: dict[str, str]
    problem: str | None


@dataclass(frozen=True)
class SettingsSaved:
    """What a save changed, for the chat to apply."""

    engine_changed: bool
    """The model, its key, the agent or the secrets: the conversation must be reopened."""
    policy: ConfirmationPolicy | None
    """The new default confirmation policy, when it changed."""


class SettingsScreen(Screen[SettingsSaved | None]):
    """The settings form; dismisses with what a save changed, or None when cancelled."""

    CSS_PATH = "settings.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+t", "check", "Test", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, profile: Profile, *, first_run: bool = False) -> None:
        super().__init__()
        self.profile = profile
        self.first_run = first_run
        self._saved = profile.saved
        self._catalog: Catalog | None = None
        self._saved_key = False
        self._forget_key = False
        self._busy = False

    # --- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """The form, in three groups, and the buttons."""
        llm = self._saved.llm
        provider = _provider_for(llm.model, llm.base_url)
        with Vertical(id="page"):
            yield Static(
                "Welcome to ohtui" if self.first_run else "Settings", id="heading", markup=False
            )
            yield Static(self._intro(), id="intro", markup=False)
            with VerticalScroll(id="form", can_focus=False):
                yield Static("Model", classes="group")
                with Horizontal(classes="row"):
                    yield Label("Provider", classes="label")
                    yield MarkedSelect(
                        self._provider_options(provider),
                        value=provider,
                        allow_blank=False,
                        compact=True,
                        id="provider",
                    )
                with Horizontal(classes="row"):
                    yield Label("Model", classes="label")
                    yield ModelInput(
                        llm.model or "", placeholder=_model_placeholder(provider), id="model"
                    )
                yield Static(
                    self._override_note(), id="override-note", classes="note", markup=False
                )
                with Horizontal(classes="row"):
                    yield Label("Base URL", classes="label")
                    yield Input(
                        llm.base_url or "",
                        placeholder="default · or http://host:port/v1",
                        id="base-url",
                    )
                with Horizontal(classes="row"):
                    yield Label("API key", classes="label")
                    yield Input(password=True, placeholder="checking…", id="api-key")
                    yield Button("Forget", id="forget-key", compact=True)
                yield Static("", id="key-note", classes="note", markup=False)
                with Horizontal(classes="row"):
                    yield Label("Reasoning", classes="label")
                    yield MarkedSelect(
                        [(level, level) for level in self._choices("llm", "reasoning_effort")],
                        value=llm.reasoning_effort or Select.NULL,
                        prompt="model default",
                        compact=True,
                        id="reasoning",
                    )
                with Horizontal(classes="row", id="check-row"):
                    yield Label("", classes="label")
                    yield Button("Test the model", id="check", compact=True, action="screen.check")
                    yield Static("", id="check-result", markup=False)

                yield Static("Secrets the agent may use", classes="group")
                yield Static("", id="secrets-note", classes="note", markup=False)
                yield SecretsEditor()

                yield Static("Behaviour", classes="group")
                yield from self._behaviour_rows()

                yield Static("Context and plugins", classes="group")
                yield from self._context_rows()
                yield Static(self._file_note(), id="file-note", classes="note", markup=False)
            yield Static("", id="error", markup=False)
            with Horizontal(id="buttons"):
                yield Button(
                    "Save", id="save", variant="primary", compact=True, action="screen.save"
                )
                yield Button(
                    "Cancel" if not self.first_run else "Not now",
                    id="cancel",
                    compact=True,
                    action="screen.cancel",
                )
            yield Static(
                "ctrl+s save · ctrl+t test · tab next field · esc cancel",
                id="legend",
                markup=False,
            )

    def _choices(self, section: str, key: str) -> list[str]:
        """The values a choice setting allows, from its type."""
        return choices_of(SettingField(section, key).info(self._saved).annotation) or []

    def _behaviour_rows(self) -> ComposeResult:
        """One row per behaviour setting, generated from its field in the Settings model."""
        saved = self._saved
        for field in BEHAVIOUR:
            override = self.profile.overrides.get((field.section, field.key))
            note = f"{override.origin} sets it for this run." if override else ""
            if (field.section, field.key) == ("confirmation", "policy"):
                yield from make_row(
                    field,
                    saved,
                    labels={p.value: p.label for p in ConfirmationPolicy},
                    note=note,
                )
            elif (field.section, field.key) == ("ui", "theme"):
                themes = sorted(self.app.available_themes)
                yield from make_row(field, saved, options=themes, note=note)
            else:
                yield from make_row(field, saved, note=note)

    def _context_rows(self) -> ComposeResult:
        """The context strategy and its settings (those of other strategies hidden), then
        the plugins."""
        saved = self._saved
        for field in CONTEXT:
            labels = (
                {s.value: s.label for s in ContextStrategy} if field.key == "strategy" else None
            )
            rows = make_row(field, saved, labels=labels)
            yield Vertical(*rows, classes="setting-rows", id=f"rows-{field.widget_id}")
        entries = saved.agent.plugins
        editable = all(entry.repo_path is None for entry in entries)
        with Horizontal(classes="row setting -noted"):
            yield Label(PLUGINS.title(saved), classes="label")
            yield Input(
                ", ".join(entry.text for entry in entries),
                placeholder="none · e.g. ~/my-plugin, github:acme/tools#v1.2",
                id=PLUGINS.widget_id,
                disabled=not editable,
            )
        note = PLUGINS.info(saved).description or ""
        if not editable:
            note = "Some plugins name a folder in their repository (repo_path): edit them in "
            note += "config.toml."
        yield Static(note, classes="note", markup=False)

    def _show_context_rows(self, strategy: ContextStrategy) -> None:
        """Show the rows that apply to `strategy`."""
        for key, strategies in CONTEXT_ROWS_FOR.items():
            widget_id = SettingField("context", key).widget_id
            self.query_one(f"#rows-{widget_id}").display = strategy in strategies

    @on(Select.Changed, "#setting-context-strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self._show_context_rows(ContextStrategy(event.value))

    def _intro(self) -> str:
        if self.first_run:
            return (
                "Choose the model the agent talks to. Pick a provider, type a model name (↓ "
                "shows matches), paste your API key, then Save. Test checks it with one tiny "
                "call."
            )
        return "Changes apply to this conversation when you save."

    def _override_note(self) -> str:
        """Which model settings this run takes from a flag or a variable instead."""
        notes = [
            f"{override.origin} sets {key} to {override.value} for this run."
            for (table, key), override in self.profile.overrides.items()
            if table == "llm" and key in ("model", "base_url")
        ]
        return " ".join(notes)

    def _file_note(self) -> str:
        where = self.profile.config_path
        if where is None:
            return "This run has no config file: settings last until you quit."
        shown = short_path(str(where), Path.home())
        return f"Saved in {shown}; more keys (temperature, timeouts, tools, storage) are there."

    def on_mount(self) -> None:
        self._show_error("")
        note = self.query_one("#override-note", Static)
        note.display = bool(self._override_note())
        self.query_one(ModelInput).focus()
        self.query_one("#forget-key", Button).display = False
        self._show_context_rows(self._saved.context.strategy)
        self._load()

    # --- loading (thread) -----------------------------------------------------------------

    @work(thread=True, exclusive=True, group="settings-load")
    def _load(self) -> None:
        load_engine()
        from ohtui.settings.catalog import load_catalog
        from ohtui.settings.secrets import SecretStoreError, provider_of

        model = self._saved.llm.model or ""
        catalog = load_catalog()
        problem = None
        saved_key = False
        secrets: dict[str, str] = {}
        store = self.profile.secrets
        try:
            if model:
                saved_key = store.api_key(provider_of(model)) is not None
            secrets = store.user_secrets()
        except SecretStoreError as exc:
            problem = str(exc)
        source = self.profile.api_key(model).source if model else "none"
        loaded = _Loaded(catalog, saved_key, source, secrets, problem)
        self.app.call_from_thread(self._loaded, loaded)

    def _loaded(self, loaded: _Loaded) -> None:
        self._catalog = loaded.catalog
        self._saved_key = loaded.saved_key
        self.query_one(SecretsEditor).load(loaded.secrets)
        self._sync_matcher()
        self._show_key_status(loaded.key_source)
        if loaded.problem:
            self._show_error(loaded.problem)

    def _show_key_status(self, source: str) -> None:
        key_input = self.query_one("#api-key", Input)
        note = self.query_one("#key-note", Static)
        keyring = self.profile.keyring
        if source not in ("keyring", "memory", "none", "argument"):
            key_input.placeholder = f"from ${source}"
            note.update(f"${source} is set: it wins over a key saved here.")
        elif self._saved_key:
            key_input.placeholder = "saved · type to replace"
            where = "in the OS keyring" if self.profile.secrets.persistent else "in memory"
            note.update(f"A key is saved {where}.")
        else:
            key_input.placeholder = "paste the key (not needed for most local servers)"
            note.update("")
        self.query_one("#forget-key", Button).display = self._saved_key
        kept = "kept in the OS keyring" if self.profile.secrets.persistent else "kept in memory"
        self.query_one("#secrets-note", Static).update(
            f"Exported only to commands that mention $NAME, masked everywhere, {kept}."
        )
        if not keyring.available and not self.profile.memory_chosen:
            note.update(
                f"{keyring.problem or 'No OS keyring is available.'} "
                "Keys you enter can be kept in memory for this session only."
            )
            note.add_class("-warning")

    # --- editing --------------------------------------------------------------------------

    @on(Select.Changed, "#provider")
    def _provider_changed(self, event: Select.Changed) -> None:
        provider = str(event.value)
        self.query_one("#model-name", Input).placeholder = _model_placeholder(provider)
        self._sync_matcher()
        if provider == CUSTOM and not self.query_one("#base-url", Input).value:
            self.query_one("#base-url", Input).placeholder = "required: http://host:port/v1"

    @on(ModelInput.Changed)
    def _model_typed(self, event: ModelInput.Changed) -> None:
        """A typed "provider/model" chooses its provider (an openai/… name on a custom
        server stays with the server)."""
        model = event.value.strip()
        prefix = model.split("/", 1)[0] if "/" in model else ""
        select = self.query_one("#provider", Select)
        if not prefix or prefix == select.value or not self._known_provider(prefix):
            return
        if prefix == "openai" and select.value == CUSTOM:
            return
        select.set_options(self._provider_options(prefix))
        select.value = prefix

    def _known_provider(self, name: str) -> bool:
        catalog = self._catalog
        return name in FEATURED or (catalog is not None and name in catalog.models)

    @staticmethod
    def _provider_options(provider: str) -> list[tuple[str, str]]:
        """The featured providers, and `provider` when it is another one."""
        return [(provider_label(p), p) for p in dict.fromkeys([*FEATURED, provider])]

    def _sync_matcher(self) -> None:
        catalog = self._catalog
        if catalog is None:
            return
        provider = str(self.query_one("#provider", Select).value)
        own = None if provider == CUSTOM else provider
        # A typed provider prefix ("bedrock/…") searches every provider's models.
        self.query_one(ModelInput).set_matcher(
            lambda typed: catalog.matches(None if "/" in typed else own, typed, limit=20)
        )

    @on(Button.Pressed, "#forget-key")
    def _forget(self) -> None:
        self._forget_key = True
        self._saved_key = False
        key_input = self.query_one("#api-key", Input)
        key_input.value = ""
        key_input.placeholder = "the saved key is removed when you save"
        self.query_one("#forget-key", Button).display = False

    @on(SecretsEditor.Problem)
    def _secret_problem(self, message: SecretsEditor.Problem) -> None:
        self._show_error(message.text)

    def action_cancel(self) -> None:
        """Leave without saving."""
        self.dismiss(None)

    # --- test -----------------------------------------------------------------------------

    def action_check(self) -> None:
        """Make one tiny call with what the form says."""
        settings = self._collect()
        if settings is None:
            return
        result = self.query_one("#check-result", Static)
        result.set_classes("")
        result.update("testing… (the first call loads the LLM client: a few seconds)")
        self._run_check(settings, self.query_one("#api-key", Input).value.strip() or None)

    @work(thread=True, exclusive=True, group="settings-check")
    def _run_check(self, settings: Settings, typed_key: str | None) -> None:
        from ohtui.settings.llm_check import check_llm

        model = settings.llm.model or ""
        key = typed_key or (None if self._forget_key else self.profile.api_key(model).value)
        outcome = check_llm(settings.llm, key)
        self.app.call_from_thread(self._checked, outcome.ok, outcome.message)

    def _checked(self, ok: bool, message: str) -> None:
        result = self.query_one("#check-result", Static)
        result.update(f"✓ {message}" if ok else f"✗ {message}")
        result.set_classes("-ok" if ok else "-failed")

    # --- saving ---------------------------------------------------------------------------

    def action_save(self) -> None:
        """Validate, then save the settings and (if changed) the key and secrets."""
        if self._busy:
            return
        settings = self._collect()
        if settings is None:
            return
        typed_key = self.query_one("#api-key", Input).value.strip() or None
        editor = self.query_one(SecretsEditor)
        secrets = editor.secrets if editor.changed else None
        wants_store = bool(typed_key) or self._forget_key or secrets is not None
        store = self.profile.secrets
        if wants_store and not store.persistent and not self.profile.memory_chosen:
            self._ask_no_keyring(lambda: self._store(settings, typed_key, secrets))
            return
        self._store(settings, typed_key, secrets)

    def _ask_no_keyring(self, go_on: Callable[[], None]) -> None:
        from ohtui.settings.secrets import provider_env_var, provider_of
        from ohtui.tui.screens.no_keyring import NoKeyringScreen

        model = self.query_one(ModelInput).value
        env_var = provider_env_var(provider_of(model)) if model else "OHTUI_API_KEY"
        problem = self.profile.keyring.problem or "No OS keyring is available."

        def chosen(choice: str | None) -> None:
            if choice == "memory":
                self.profile.use_memory_secrets()
                go_on()
            elif choice == "env":
                self._show_error(
                    f"Nothing was saved. Set {env_var} in your shell (export {env_var}=…) "
                    "and start ohtui again; secrets can be set as variables the same way."
                )

        self.app.push_screen(NoKeyringScreen(problem, env_var), chosen)

    def _store(
        self, settings: Settings, typed_key: str | None, secrets: dict[str, str] | None
    ) -> None:
        self._busy = True
        self._show_error("saving…")
        self._write(settings, typed_key, secrets)

    @work(thread=True, exclusive=True, group="settings-save")
    def _write(
        self, settings: Settings, typed_key: str | None, secrets: dict[str, str] | None
    ) -> None:
        """On a worker: config.toml, then the key and the secrets (None: unchanged)."""
        from ohtui.settings.secrets import SecretStoreError, provider_of

        before = self.profile.settings
        try:
            self.profile.save(settings)
            store = self.profile.secrets
            provider = provider_of(settings.llm.model or "")
            if typed_key or self._forget_key:
                store.set_api_key(provider, typed_key)
            if secrets is not None:
                store.set_user_secrets(secrets)
        except (OSError, SecretStoreError) as exc:
            message = str(exc) if isinstance(exc, SecretStoreError) else _os_error(exc)
            self.app.call_from_thread(self._save_failed, message)
            return
        after = self.profile.settings
        engine_changed = (
            before.llm != after.llm
            or before.agent != after.agent
            or before.sandbox != after.sandbox
            or before.context != after.context
            or bool(typed_key)
            or self._forget_key
            or secrets is not None
        )
        policy = after.confirmation.policy
        changed = policy if policy != before.confirmation.policy else None
        self.app.call_from_thread(self.dismiss, SettingsSaved(engine_changed, changed))

    def _save_failed(self, message: str) -> None:
        self._busy = False
        self._show_error(message)

    def _collect(self) -> Settings | None:
        """The form as Settings (the config file's other keys unchanged), or None after
        showing what is wrong."""

        provider = str(self.query_one("#provider", Select).value)
        model = self.query_one(ModelInput).value
        base_url = self.query_one("#base-url", Input).value.strip()
        if model and "/" not in model:
            model = f"{'openai' if provider == CUSTOM else provider}/{model}"
        if not model and ("llm", "model") not in self.profile.overrides:
            self._show_error("Choose a model: type its name (↓ shows matches).")
            return None
        if provider == CUSTOM and not base_url:
            self._show_error("An OpenAI-compatible server needs its base URL.")
            return None
        reasoning = self.query_one("#reasoning", Select).value
        values: dict[SettingField, Any] = {
            SettingField("llm", "model"): model or None,
            SettingField("llm", "base_url"): base_url or None,
            SettingField("llm", "reasoning_effort"): (
                None if reasoning is Select.NULL else reasoning
            ),
        }
        values.update((field, read_row(field, self)) for field in (*BEHAVIOUR, *CONTEXT))
        plugins = self.query_one(f"#{PLUGINS.widget_id}", Input)
        if not plugins.disabled:
            values[PLUGINS] = parse_plugin_list(plugins.value)
        try:
            settings = collect(self._saved, values)
        except SettingError as exc:
            self._show_error(str(exc))
            return None
        self._show_error("")
        return settings

    def _show_error(self, text: str) -> None:
        error = self.query_one("#error", Static)
        error.update(text)
        error.display = bool(text)


def _provider_for(model: str | None, base_url: str | None) -> str:
    """The provider choice for a saved model: a base URL with openai/ is a custom server."""
    if not model:
        return FEATURED[0]
    prefix = model.split("/", 1)[0] if "/" in model else "openai"
    return CUSTOM if prefix == "openai" and base_url else prefix


def _model_placeholder(provider: str) -> str:
    if provider == CUSTOM:
        return "the server's model name, e.g. openai/qwen3-coder"
    return f"e.g. {provider}/… (↓ shows matches)"


def _os_error(exc: OSError) -> str:
    where = f" {exc.filename}" if exc.filename else ""
    return f"Cannot write{where}: {exc.strerror or exc}. Nothing was changed."
