"""Settings form rows generated from the `Settings` model's fields, and the form read back.

A field's type picks its widget: a choice (a Literal or an Enum) is a Select, a flag a
Switch, a number or a text an Input. Its `title` labels the row and its `description`
explains it, so a new setting needs one declaration in `ohtui/settings/schema.py` and one
entry in a list here. Values are checked by the field's own validation (bounds, types) and
collected with `model_copy(update=...)`, so the file's other keys stay as they are.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static, Switch

from ohtui.tui.widgets.marked_choices import MarkedSelect, MarkedSwitch

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

    from ohtui.settings.schema import Settings


@dataclass(frozen=True, slots=True)
class SettingField:
    """One key of config.toml: its table and its name, e.g. ("ui", "theme")."""

    section: str
    key: str

    @property
    def widget_id(self) -> str:
        """The id of the widget that edits it."""
        return f"setting-{self.section}-{self.key}".replace("_", "-")

    def info(self, settings: Settings) -> FieldInfo:
        """The pydantic field: its type, title, description and bounds."""
        return type(self.table(settings)).model_fields[self.key]

    def table(self, settings: Settings) -> BaseModel:
        """The table (section model) the key is in."""
        table = getattr(settings, self.section)
        assert isinstance(table, BaseModel)
        return table

    def value(self, settings: Settings) -> Any:
        """Its value in `settings`."""
        return getattr(self.table(settings), self.key)

    def title(self, settings: Settings) -> str:
        """Its name for people: the field's title, else its key."""
        return self.info(settings).title or self.key.replace("_", " ").capitalize()


BEHAVIOUR: tuple[SettingField, ...] = (
    SettingField("confirmation", "policy"),
    SettingField("sandbox", "mode"),
    SettingField("sandbox", "network"),
    SettingField("agent", "max_iteration_per_run"),
    SettingField("agent", "stuck_detection"),
    SettingField("ui", "theme"),
    SettingField("ui", "expand_outputs"),
    SettingField("ui", "auto_title"),
    SettingField("ui", "screen_reader"),
)
"""The rows of the settings screen's Behaviour group, in order."""

CONTEXT: tuple[SettingField, ...] = (
    SettingField("context", "strategy"),
    SettingField("context", "threshold"),
    SettingField("context", "max_input_tokens"),
    SettingField("context", "max_size"),
    SettingField("context", "keep_first"),
    SettingField("context", "window_size"),
    SettingField("context", "summary_ratio"),
    SettingField("context", "preserve_recent_messages"),
)
"""The rows of the settings screen's Context group, in order."""


class SettingError(ValueError):
    """A value in the form that its setting cannot take; the message names the row."""


def choices_of(annotation: Any) -> list[str] | None:
    """The values a Literal or Enum type allows (None: not a choice); None itself is left
    out of an optional one."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return [str(value) for value in typing.get_args(annotation)]
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                return choices_of(arg)
        return None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(member.value) for member in annotation]
    return None


def make_row(
    field: SettingField,
    settings: Settings,
    *,
    labels: Mapping[str, str] | None = None,
    options: Sequence[str] | None = None,
    note: str = "",
) -> list[Widget]:
    """The widgets that edit `field`, showing its value in `settings`: a row, and under a
    choice or a text its description (a switch has it beside it).

    `labels`: names for a choice's values; `options`: the values to offer instead of the
    type's (e.g. the themes the app has); `note`: said after the description.
    """
    info = field.info(settings)
    value = field.value(settings)
    shown = value.value if isinstance(value, enum.Enum) else value
    hint = " ".join(part for part in (info.description or "", note) if part)
    choices = list(options) if options is not None else choices_of(info.annotation)
    label = Label(field.title(settings), classes="label")
    if info.annotation is bool:
        switch = MarkedSwitch(bool(shown), id=field.widget_id, tooltip=note or None)
        text = Static(hint, classes="switch-label", markup=False)
        return [Horizontal(label, switch, text, classes="row setting")]
    widget: Widget
    if choices is not None:
        names = labels or {}
        known = shown is not None and str(shown) in choices
        widget = MarkedSelect(
            [(names.get(choice, choice), choice) for choice in choices],
            value=str(shown) if known else Select.NULL,
            allow_blank=not known,
            compact=True,
            id=field.widget_id,
        )
    else:
        kinds: dict[Any, Literal["integer", "number", "text"]] = {int: "integer", float: "number"}
        kind = kinds.get(_required(info.annotation), "text")
        widget = Input(
            "" if shown is None else str(shown),
            type=kind,
            placeholder="unset" if optional(info.annotation) else "",
            id=field.widget_id,
            classes="-number" if kind != "text" else "",
        )
    row = Horizontal(label, widget, classes="row setting -noted" if hint else "row setting")
    return [row, Static(hint, classes="note", markup=False)] if hint else [row]


def optional(annotation: Any) -> bool:
    """Whether a field's type allows None (an emptied input means unset)."""
    origin = typing.get_origin(annotation)
    return origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


def _required(annotation: Any) -> Any:
    """The type without its None: `float | None` is a float."""
    if not optional(annotation):
        return annotation
    rest = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    return rest[0] if len(rest) == 1 else annotation


def read_row(field: SettingField, root: Widget) -> Any:
    """What the row of `field` under `root` says (Select.NULL: nothing chosen)."""
    widget = root.query_one(f"#{field.widget_id}")
    if isinstance(widget, Switch):
        return widget.value
    if isinstance(widget, Select):
        return widget.value
    assert isinstance(widget, Input)
    return widget.value.strip()


def collect(settings: Settings, values: Mapping[SettingField, Any]) -> Settings:
    """`settings` with `values` put in (Select.NULL: unchanged), each checked by its field's
    validation. Raises SettingError naming the row and what it expects."""
    from ohtui.settings.config_file import describe_error

    tables: dict[str, dict[str, Any]] = {}
    for field, value in values.items():
        if value is Select.NULL:
            continue
        unset = value == "" and optional(field.info(settings).annotation)
        tables.setdefault(field.section, {})[field.key] = None if unset else value
    update: dict[str, BaseModel] = {}
    for section, changes in tables.items():
        table = getattr(settings, section)
        try:
            checked = type(table).model_validate({**table.model_dump(), **changes})
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            key = str(error["loc"][0]) if error["loc"] else ""
            title = SettingField(section, key).title(settings) if key in changes else section
            raise SettingError(f"{title}: {describe_error(error)}.") from exc
        update[section] = table.model_copy(update={k: getattr(checked, k) for k in changes})
    return settings.model_copy(update=update)
