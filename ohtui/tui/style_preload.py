"""A screen's styles parsed while the app is idle, so its first push parses nothing.

The first time Textual pushes a screen it reads the screen's CSS_PATH files, re-parses every
source of the app's stylesheet (`Stylesheet.reparse` starts from an empty parse cache) and
restyles every node of the app; each widget class mounted for the first time then adds its
DEFAULT_CSS, and the next style lookup parses every source its parse cache lacks. For the
conversation picker in ohtui that was 25-50 ms of the UI thread in one step.

`preload_styles` does that work ahead, one source per turn of the event loop (each parses in
≤ 7 ms): the sources the screen will add are parsed into the stylesheet's own parse cache,
then added in one cheap step that assembles the rules from the cache. Textual's push then
finds them there and parses nothing.

It uses three Textual internals (8.2): `Stylesheet._parse_rules` (one source's rules, through
the stylesheet's parse cache), that cache (`_parse_cache`) and `DOMNode._get_default_css` (a
class's DEFAULT_CSS sources, keyed as Textual keys them). tests/tui/test_picker.py checks
that a push after the preload adds no source and does not parse.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.css.model import RuleSet
from textual.css.stylesheet import CssSource, Stylesheet, StylesheetError
from textual.css.tokenizer import TokenError
from textual.dom import DOMNode
from textual.screen import Screen

logger = logging.getLogger(__name__)

_CssKey = tuple[str, str]


def css_files(screen_type: type[Screen[Any]]) -> list[Path]:
    """The screen class's CSS_PATH files, resolved as Textual resolves them."""
    css_path = screen_type.CSS_PATH
    if css_path is None:
        return []
    paths = css_path if isinstance(css_path, list) else [css_path]
    base = getattr(screen_type, "_BASE_PATH", None) or inspect.getfile(screen_type)
    return [(Path(base).parent / path).resolve() for path in paths]


def _default_css(node_type: type[DOMNode]) -> list[tuple[_CssKey, str, int, str]]:
    """The DEFAULT_CSS sources a node of this type adds when it mounts."""
    node = object.__new__(node_type)  # not initialised: only its class's CSS bases are read
    return node._get_default_css()


def _planned(
    stylesheet: Stylesheet, screen_type: type[Screen[Any]], widget_types: Iterable[type]
) -> Stylesheet:
    """A copy of the stylesheet with the screen's sources added as its push would add them."""
    planned = stylesheet.copy()
    for path in css_files(screen_type):
        if not planned.has_source(str(path)):
            planned.read(path)
    for node_type in (screen_type, *widget_types):
        for read_from, css, tie_breaker, scope in _default_css(node_type):
            planned.add_source(
                css,
                read_from=read_from,
                is_default_css=True,
                tie_breaker=tie_breaker,
                scope=scope,
            )
    return planned


def _cache_key(read_from: _CssKey, source: CssSource) -> tuple[str, _CssKey, bool, int, str]:
    """The key `Stylesheet._parse_rules` caches a source's rules under."""
    return (source.content, read_from, source.is_defaults, source.tie_breaker, source.scope)


def _parse(stylesheet: Stylesheet, read_from: _CssKey, source: CssSource) -> list[RuleSet]:
    """One source's rules, through (and into) the stylesheet's parse cache."""
    return stylesheet._parse_rules(
        source.content, read_from, source.is_defaults, source.tie_breaker, source.scope
    )


def _styles_only(rules: list[RuleSet], screen_type: type[Screen[Any]]) -> bool:
    """Every rule's selectors start at the screen's type: no node outside the screen matches."""
    return all(
        selectors.selectors and selectors.selectors[0].name == screen_type.__name__
        for rule in rules
        for selectors in rule.selector_set
    )


async def preload_styles(
    app: App[Any], screen_type: type[Screen[Any]], widget_types: Iterable[type]
) -> bool:
    """Add a screen's CSS files and its widgets' DEFAULT_CSS to the app's stylesheet, parsing
    one source per turn of the event loop; True when there was anything to add.

    `widget_types`: the widget classes the screen mounts. A CSS error is left for the push to
    report, as it would be without the preload. Should the parse cache lose entries meanwhile
    (a theme change empties it), the last step parses them, as Textual would."""
    stylesheet = app.stylesheet
    try:
        planned = _planned(stylesheet, screen_type, widget_types)
        if planned.source == stylesheet.source:
            return False
        files = [(str(path), "") for path in css_files(screen_type)]
        new_files = [key for key in files if key not in stylesheet.source]
        # Every source, not only the new ones: assembling the rules parses all the cache
        # lacks (after a theme change, every source) in one step.
        for read_from, source in planned.source.items():
            if _cache_key(read_from, source) not in stylesheet._parse_cache:
                _parse(stylesheet, read_from, source)
                await asyncio.sleep(0)  # a key press waits for one source at most
        for read_from, source in planned.source.items():
            stylesheet.add_source(
                source.content,
                read_from=read_from,
                is_default_css=source.is_defaults,
                tie_breaker=source.tie_breaker,
                scope=source.scope,
            )
        stylesheet.parse()
        file_rules = [
            rule for key in new_files for rule in _parse(stylesheet, key, stylesheet.source[key])
        ]
    except (StylesheetError, TokenError) as error:
        logger.warning("%s styles not preloaded: %s", screen_type.__name__, error)
        return False
    if not _styles_only(file_rules, screen_type):
        stylesheet.update(app)  # as Textual's push does: a rule may style nodes on show
    return True
