"""Screen-reader mode's switch: the words an environment variable or config.toml may use.

Standard library only: the command line reads it before anything heavy loads, and the app
decides on it before its first frame.
"""

from __future__ import annotations

from collections.abc import Mapping

ENV_VAR = "OHTUI_SCREEN_READER"
"""The environment variable that turns screen-reader mode on (or off) for one run."""
FLAG = "--screen-reader"
ON_WORDS = ("1", "true", "yes")
OFF_WORDS = ("0", "false", "no")
ALLOWED = "1, true or yes (on), or 0, false or no (off)"
"""The values a switch takes, as an error message says them."""


class SwitchError(ValueError):
    """A value that is not one of the switch's words."""


def parse_switch(value: object) -> bool:
    """True or False from a bool or one of the words (any case, spaces around ignored)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ON_WORDS:
            return True
        if word in OFF_WORDS:
            return False
    raise SwitchError(f"expected {ALLOWED}")


def env_switch(environ: Mapping[str, str]) -> bool | None:
    """What OHTUI_SCREEN_READER says (None: unset or empty). SwitchError names the variable,
    the value found and the values allowed."""
    value = environ.get(ENV_VAR, "")
    if not value:
        return None
    try:
        return parse_switch(value)
    except SwitchError:
        raise SwitchError(f"{ENV_VAR}={value!r} is not on or off: use {ALLOWED}") from None


def screen_reader_on(early: object) -> bool:
    """Whether this run is in screen-reader mode, from `[ui] screen_reader` as read before
    the settings load (the flag's True, the variable's word or config.toml's value, in that
    order: `Profile.early_value`). Anything but a valid switch counts as off: the settings
    report it once they load."""
    try:
        return parse_switch(early)
    except SwitchError:
        return False
