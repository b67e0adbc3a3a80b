"""The composer: the multi-line message input with prompt history and `/` and `@` completion.

Nothing here may import the engine (`ohtui.sdk`), litellm or pydantic: the composer is on
screen in the first frame. Workspace files are indexed on a thread worker, and each keystroke
does only work bounded by the number of matches shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Location
from textual.worker import get_current_worker

from ohtui.image_file import ImageFile, ImageFileError, check_image, looks_like_image
from ohtui.tui.file_index import FileIndex, index_workspace
from ohtui.tui.history import PromptHistory
from ohtui.tui.screen_reader import reading_aloud, speakable
from ohtui.tui.slash import SlashCommand, filter_commands
from ohtui.tui.widgets.attached import AttachedImages, mentioned_images, pasted_paths
from ohtui.tui.widgets.marked import MarkedOptionList
from ohtui.tui.widgets.pasted import PastedBlocks

if TYPE_CHECKING:
    from ohtui.tui.widgets.clipboard_image import ClipboardImage

__all__ = ["Composer", "ComposerInput", "SlashCommand"]

PASTE_HINT = "long paste collapsed · Ctrl+G expands it to edit"
"""Above the input while it shows a pasted-text chip."""
IMAGE_HINT = "image attached · Backspace after its chip removes it"
"""Above the input while it shows an image chip."""
PLACEHOLDER = "Message the agent · Shift+Enter new line · / commands · @ files"
INDEXING_LABEL = "indexing files…"
MAX_MATCHES = 20
NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j"})
"""Keys that insert a line break (many terminals send Shift+Enter as Enter: Ctrl+J always works)."""


@dataclass(frozen=True)
class _Trigger:
    """The `/command` or `@path` token being completed."""

    kind: Literal["/", "@"]
    fragment: str
    start: Location
    end: Location


CompletionItem = SlashCommand | str | None
"""What a menu row stands for: a command, a path, or nothing (the "indexing" row)."""


class ComposerInput(TextArea):
    """The composer's text area: hands the keys the composer owns to it before editing."""

    def __init__(
        self,
        key_handler: Callable[[str], bool],
        paste_handler: Callable[[str], str] = lambda text: text,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=PLACEHOLDER,
        )
        self._key_handler = key_handler
        self._paste_handler = paste_handler

    async def _on_paste(self, event: events.Paste) -> None:
        # prevent_default stops TextArea's own handler: the text goes in as the handler says.
        event.prevent_default()
        if self.read_only:
            return
        # Terminals (and tmux) may end pasted lines with CR: lines are LF here.
        text = self._paste_handler(event.text.replace("\r\n", "\n").replace("\r", "\n"))
        if result := self._replace_via_keyboard(text, *self.selection):
            self.move_cursor(result.end_location)
            self.focus()

    async def _on_key(self, event: events.Key) -> None:
        if self._key_handler(event.key):
            # prevent_default also stops TextArea's own handler (which would insert a newline).
            event.stop()
            event.prevent_default()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Copy only when text is selected, so an idle Ctrl+C reaches the app."""
        if action == "copy" and not self.selected_text:
            return False
        return super().check_action(action, parameters)


class Composer(Vertical):
    """The message input at the bottom of the chat screen, with its completion menu above it."""

    DEFAULT_CSS = """
    Composer {
        height: auto;
        & > #completions {
            display: none;
            height: auto;
            max-height: 10;
            border: none;
            padding: 0 1;
            background: $surface;
            &.-open { display: block; }
            & > .option-list--option-highlighted {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
        & > #input {
            height: auto;
            max-height: 10;
        }
        /* Messages cannot be sent (the placeholder says why): the input says so too. */
        &.-blocked > #input, &.-blocked > #input:focus {
            border: tall $warning;
        }
    }
    """

    INDEX_MAX_AGE: ClassVar[float] = 30.0
    """Seconds after which opening the `@` menu refreshes the file index in the background."""
    INDEX_WARMUP_DELAY: ClassVar[float] = 1.0
    """Seconds after mounting to index the workspace, so the first `@` finds it ready."""

    @dataclass
    class _Posted(Message):
        composer: Composer

        @property
        def control(self) -> Composer:
            """The Composer the message came from."""
            return self.composer

    @dataclass
    class Submitted(_Posted):
        """The user sent a message (blank lines around it removed), with the images whose
        chips it shows."""

        text: str
        images: tuple[ImageFile, ...] = ()

    class TabbedOut(_Posted):
        """Tab in the input with no completion to take: the user wants to leave it."""

    class SlashMenuOpened(_Posted):
        """The `/` menu opened: a moment to read the custom commands again if they changed."""

    class _IndexReady(Message, bubble=False):
        def __init__(self, generation: int, index: FileIndex) -> None:
            super().__init__()
            self.generation = generation
            self.index = index

    class _ClipboardRead(Message, bubble=False):
        def __init__(self, result: ClipboardImage) -> None:
            super().__init__()
            self.result = result

    class _MoreMatches(Message, bubble=False):
        def __init__(self, generation: int, paths: list[str]) -> None:
            super().__init__()
            self.generation = generation
            self.paths = paths

    def __init__(
        self,
        workspace: Path | None = None,
        history: PromptHistory | None = None,
        commands: Sequence[SlashCommand] = (),
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._workspace = workspace
        self._history = history
        self._commands: tuple[SlashCommand, ...] = tuple(commands)
        self._menu = MarkedOptionList(id="completions", markup=False)
        self._menu.can_focus = False  # focus stays in the input; the menu follows its keys
        self._pastes = PastedBlocks()
        self._images = AttachedImages()
        self._clipboard_folder: Path | None = None
        self._clipboard_count = 0
        self._input = ComposerInput(self._handle_key, self._pasted, id="input")
        self._items: list[CompletionItem] = []
        self._trigger: _Trigger | None = None
        self._dismissed: _Trigger | None = None
        self._suppressed_text: str | None = None
        """Text set by history recall: no completion menu until the user edits it."""
        self._history_index: int | None = None
        self._history_snapshot: list[str] = []
        self._draft = ""
        self._index: FileIndex | None = None
        self._indexing = False
        self._index_generation = 0
        self._filter_generation = 0

    def compose(self) -> ComposeResult:
        """The completion menu, then the input below it."""
        yield self._menu
        yield self._input

    def on_mount(self) -> None:
        """After the first frame, load the history and warm the file index (both on threads)."""
        if self._history is not None:
            self.call_after_refresh(self._load_history)
        if self._workspace is not None:
            self.set_timer(self.INDEX_WARMUP_DELAY, partial(self._ensure_index, refresh=False))
        self.say_why_blocked(None)  # the hint, in words in screen-reader mode

    def _load_history(self) -> None:
        # After the first frame: start-up time is measured, and the file may be big.
        if self._history is not None and not self._history.loaded:
            self.run_worker(self._history.load, thread=True, group="history", exit_on_error=False)

    # --- public API

    @property
    def text(self) -> str:
        """The text in the input."""
        return self._input.text

    @text.setter
    def text(self, value: str) -> None:
        self._history_index = None
        self._input.load_text(value)
        self._input.move_cursor(self._input.document.end)

    @property
    def completion_open(self) -> bool:
        """Whether the completion menu is showing."""
        return self._menu.has_class("-open")

    def clear(self) -> None:
        """Empty the input, close the menu and stop walking the history."""
        self._history_index = None
        self._trigger = None
        self._input.load_text("")
        self._pastes.clear()
        self._images.clear()
        self._close_menu()

    def put_back(self, text: str, images: Sequence[ImageFile]) -> None:
        """Show a draft that was not sent again, with its images attached as before."""
        self.text = text
        self._images.restore(text, images)
        self._input.focus()

    def say_why_blocked(self, reason: str | None) -> None:
        """Show why messages cannot be sent in place of the usual hint (None: they can)."""
        hint = reason or PLACEHOLDER
        self._input.placeholder = speakable(hint) if reading_aloud(self) else hint
        self.set_class(reason is not None, "-blocked")

    def focus_input(self, typed: str = "") -> None:
        """Move keyboard focus to the input, adding `typed` at its cursor (a key pressed
        while something else had focus)."""
        self._input.focus()
        if typed:
            self._input.insert(typed)

    def set_commands(self, commands: Sequence[SlashCommand]) -> None:
        """Replace the slash commands offered after `/`."""
        self._commands = tuple(commands)
        if self._trigger is not None and self._trigger.kind == "/":
            self._reopen_menu()

    def set_workspace(self, path: Path | None) -> None:
        """Offer files from `path` after `@` (None turns `@` completion off)."""
        self._workspace = path
        self._index = None
        self._indexing = False
        self._index_generation += 1
        self.workers.cancel_group(self, "file-index")
        if self._trigger is not None and self._trigger.kind == "@":
            self._reopen_menu()

    # --- keys

    def _handle_key(self, key: str) -> bool:
        """Act on a key pressed in the input; True when it was ours (it then goes no further)."""
        if key == "ctrl+g":
            return self._expand_pastes()
        if key == "ctrl+v" and not self._input.read_only:
            self._read_clipboard()
            return True
        if key == "backspace":
            return self._delete_chip()
        if key not in {"enter", "tab", "escape", "up", "down", *NEWLINE_KEYS}:
            return False
        self._sync_completion()  # the latest Changed message may still be queued
        if self.completion_open:
            if key == "up":
                self._menu.action_cursor_up()
                return True
            if key == "down":
                self._menu.action_cursor_down()
                return True
            if key == "escape":
                self._dismiss()
                return True
            if key == "tab":
                self._accept(submit=False)
                return True
            if key == "enter" and self._accept(submit=True):
                return True
        if key == "enter":
            self._submit(self._input.text)
            return True
        if key == "tab":
            self.post_message(self.TabbedOut(self))
            return True
        if key in NEWLINE_KEYS:
            self._input.replace("\n", *self._input.selection, maintain_selection_offset=False)
            return True
        if key == "up":
            return self._history_older()
        if key == "down":
            return self._history_newer()
        return False

    def _submit(self, raw: str) -> None:
        text = _tidy(self._pastes.expand(raw))
        if not text:
            return
        images: tuple[ImageFile, ...] = ()
        if not text.startswith("/"):
            mentioned = self._attach_mentions(text)
            if mentioned is None:
                return  # an @-mentioned image cannot be sent: the user was told why
            text = mentioned
            images = tuple(self._images.in_text(text))
        self._hand_over(self.Submitted(self, text, images))
        if self._history is not None and self._history.remember(text):
            self.run_worker(self._history.flush, thread=True, group="history", exit_on_error=False)
        self.clear()

    def _hand_over(self, submitted: Submitted) -> None:
        """Post `submitted` straight to the screen, and draw no frame until it has handled
        it: the next frame shows what the text did (a screen opened, a message sent), not
        the composer cleared a moment before (a frame of the chat that cost 6-9 ms before
        /resume's picker could start, measured)."""
        screen = self.screen
        held = ExitStack()
        held.enter_context(self.app.batch_update())
        if not (screen.post_message(submitted) and screen.call_later(held.close)):
            held.close()  # the screen is closing: nothing would let go of the frames

    # --- long pastes and images

    def _pasted(self, text: str) -> str:
        """What a paste puts in the input: chips for paths of image files (as terminals paste
        a dragged file), a chip for a long paste, else the text itself."""
        paths = pasted_paths(text, self._workspace)
        if paths is not None:
            chips = self._attach_files(paths)
            if chips is not None:
                return chips + " "
        return self._pastes.collapse(text) if self._pastes.is_long(text) else text

    def _attach_files(self, paths: Sequence[Path]) -> str | None:
        """The chips of the image files at `paths`, attached; None (and the user told why)
        when one of them cannot be sent."""
        chips: list[str] = []
        for path in paths:
            try:
                chips.append(self._images.attach(check_image(path)))
            except ImageFileError as exc:
                self.notify(str(exc), title="Image not attached", severity="warning", timeout=8)
                return None
        return " ".join(chips)

    def _read_clipboard(self) -> None:
        """Ctrl+V: attach the image on the system clipboard, or paste as TextArea does."""
        self._clipboard_count += 1
        self.run_worker(
            partial(self._clipboard_worker, self._clipboard_count),
            thread=True,
            group="clipboard",
            exit_on_error=False,
        )

    def _clipboard_worker(self, number: int) -> None:
        # Subprocesses and temporary files: imported on the first Ctrl+V, off the first frame.
        from ohtui.tui.widgets.clipboard_image import read_clipboard_image

        if self._clipboard_folder is None:
            import tempfile

            self._clipboard_folder = Path(tempfile.mkdtemp(prefix="ohtui-clipboard-"))
        self.post_message(self._ClipboardRead(read_clipboard_image(self._clipboard_folder, number)))

    @on(_ClipboardRead)
    def _on_clipboard_read(self, message: _ClipboardRead) -> None:
        result = message.result
        area = self._input
        if result.path is not None:
            chip = self._attach_files([result.path])
            if chip is not None:
                area.replace(f"{chip} ", *area.selection, maintain_selection_offset=False)
            return
        if self.app.clipboard:  # text copied inside ohtui: paste it, as Ctrl+V always did
            area.action_paste()
        else:
            self.notify(result.problem or "", title="No image pasted", severity="warning")

    def _attach_mentions(self, text: str) -> str | None:
        """`text` with each `@mention` of an image file replaced by its chip (the image
        attached); None when one cannot be sent (the draft stays as it is)."""
        mentions = mentioned_images(text, self._workspace)
        chips = [self._attach_files([path]) for _, _, path in mentions]
        for (start, end, _), chip in reversed(list(zip(mentions, chips, strict=True))):
            if chip is None:
                return None
            text = f"{text[:start]}{chip}{text[end:]}"
        return text

    def _expand_pastes(self) -> bool:
        """Ctrl+G: put the pasted text in place of its chips, to edit it."""
        area = self._input
        if not self._pastes.has_chips(area.text):
            return False
        area.load_text(self._pastes.expand(area.text))
        area.move_cursor(area.document.end)
        self._pastes.clear()
        return True

    def _delete_chip(self) -> bool:
        """Backspace right after a chip deletes the whole chip (and the text or image it
        stands for)."""
        area = self._input
        if area.selected_text:
            return False
        row, column = area.cursor_location
        before = area.document.get_line(row)[:column]
        length = self._pastes.chip_ending(before) or self._images.chip_ending(before)
        if not length:
            return False
        area.delete((row, column - length), (row, column), maintain_selection_offset=False)
        return True

    def _show_paste_hint(self) -> None:
        text = self.text
        if self._pastes.has_chips(text):
            hint = PASTE_HINT
        elif self._images.in_text(text):
            hint = IMAGE_HINT
        else:
            hint = ""
        self._input.border_title = hint

    # --- history

    def _history_older(self) -> bool:
        area = self._input
        if self._history is None or not area.navigator.is_first_wrapped_line(area.cursor_location):
            return False
        if self._history_index is None:
            snapshot = self._history.entries
            if not snapshot:
                return False
            self._history_snapshot = snapshot
            self._draft = area.text
            self._history_index = len(snapshot)
        if self._history_index > 0:
            self._history_index -= 1
            self._recall(self._history_snapshot[self._history_index], older=True)
        return True

    def _history_newer(self) -> bool:
        area = self._input
        if self._history_index is None or not area.navigator.is_last_wrapped_line(
            area.cursor_location
        ):
            return False
        self._history_index += 1
        if self._history_index >= len(self._history_snapshot):
            self._history_index = None
            self._recall(self._draft, older=False)
        else:
            self._recall(self._history_snapshot[self._history_index], older=False)
        return True

    def _recall(self, text: str, *, older: bool) -> None:
        """Show a history entry (or the draft) without opening a completion menu for it."""
        area = self._input
        self._suppressed_text = text
        self._trigger = None
        self._close_menu()
        area.load_text(text)
        end = area.document.end
        # Going older, a multi-row entry starts with the cursor on its first row, so the next Up
        # keeps walking; going newer, the cursor ends on the last row for the same reason.
        single_row = area.navigator.is_first_wrapped_line(end)
        area.move_cursor(end if not older or single_row else (0, 0))

    # --- completion

    @on(TextArea.Changed, "#input")
    @on(TextArea.SelectionChanged, "#input")
    def _on_input_edited(self) -> None:
        self._sync_completion()
        self._show_paste_hint()

    @on(OptionList.OptionSelected, "#completions")
    def _on_completion_clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._accept(submit=False)
        self._input.focus()

    def _find_trigger(self) -> _Trigger | None:
        area = self._input
        document = area.document
        if self._suppressed_text is not None:
            if area.text == self._suppressed_text:
                return None
            self._suppressed_text = None
        if not area.selection.is_empty:
            return None
        first = document.get_line(0)
        if document.line_count == 1 and first.startswith("/") and not _has_space(first):
            return _Trigger("/", first[1:], (0, 0), (0, len(first)))
        if self._workspace is None:
            return None
        row, column = area.cursor_location
        line = document.get_line(row)
        start = column
        while start > 0 and not line[start - 1].isspace():
            start -= 1
        if start == column or line[start] != "@":
            return None
        end = column
        while end < len(line) and not line[end].isspace():
            end += 1
        return _Trigger("@", line[start + 1 : end], (row, start), (row, end))

    def _sync_completion(self) -> None:
        """Open, refresh or close the menu to match the token at the cursor."""
        if not self.is_mounted:
            return
        trigger = self._find_trigger()
        if trigger != self._dismissed:
            self._dismissed = None
        else:
            trigger = None  # Escape closed the menu for exactly this token
        if trigger == self._trigger:
            return
        previous = self._trigger
        self._trigger = trigger
        if trigger is None:
            self._close_menu()
        elif trigger.kind == "/":
            if previous is None or previous.kind != "/":
                self.post_message(self.SlashMenuOpened(self))
            commands = filter_commands(self._commands, trigger.fragment)
            self._show(
                [
                    Content.assemble(
                        (f"/{command.name}", "bold"),
                        (f" {command.argument_hint}" if command.argument_hint else "", "italic"),
                        "  ",
                        (command.description, "$foreground-muted"),
                    )
                    for command in commands
                ],
                list(commands),
            )
        else:
            opening = previous is None or previous.kind != "@"
            self._show_paths(trigger.fragment, opening=opening)

    def _show_paths(self, fragment: str, *, opening: bool) -> None:
        self._ensure_index(refresh=opening)
        index = self._index
        if index is None:
            self._show([Option(INDEXING_LABEL, disabled=True)], [None])
            return
        matches = index.quick_matches(fragment)
        self._show([Content(path) for path in matches], list(matches))
        if fragment and len(matches) < MAX_MATCHES:
            # A substring search scans the whole index: never on the UI thread.
            self.run_worker(
                partial(self._search_paths, index, fragment, matches, self._filter_generation),
                thread=True,
                exclusive=True,
                group="completion-search",
                exit_on_error=False,
            )

    def _search_paths(
        self, index: FileIndex, fragment: str, shown: list[str], generation: int
    ) -> None:
        """Find substring matches to append to the menu (runs on a thread worker)."""
        worker = get_current_worker()
        found = index.substring_matches(
            fragment, shown, MAX_MATCHES - len(shown), lambda: worker.is_cancelled
        )
        if found and not worker.is_cancelled:
            self.post_message(self._MoreMatches(generation, found))

    @on(_MoreMatches)
    def _on_more_matches(self, message: _MoreMatches) -> None:
        if message.generation != self._filter_generation:
            return  # the user has typed on since
        self._items.extend(message.paths)
        self._menu.add_options([Content(path) for path in message.paths])
        self._menu.add_class("-open")
        if self._menu.highlighted is None:
            self._menu.action_first()

    def _show(self, prompts: Sequence[Content | Option], items: list[CompletionItem]) -> None:
        self._filter_generation += 1
        self._items = items
        self._menu.set_options(prompts)
        self._menu.set_class(bool(items), "-open")
        self._menu.action_first()

    def _close_menu(self) -> None:
        self._filter_generation += 1
        self._items = []
        self._menu.remove_class("-open")
        self._menu.clear_options()
        self.workers.cancel_group(self, "completion-search")

    def _reopen_menu(self) -> None:
        """Rebuild the menu from scratch (its source changed)."""
        self._trigger = None
        self._close_menu()
        self._sync_completion()

    def _dismiss(self) -> None:
        self._dismissed = self._trigger
        self._trigger = None
        self._close_menu()

    def _accept(self, *, submit: bool) -> bool:
        """Put the highlighted completion into the input; False when nothing can be accepted."""
        highlighted = self._menu.highlighted
        trigger = self._trigger
        if highlighted is None or trigger is None or highlighted >= len(self._items):
            return False
        item = self._items[highlighted]
        if item is None:
            return False
        if isinstance(item, SlashCommand):
            if submit and not item.takes_argument:
                self._submit(f"/{item.name}")
                return True
            replacement = f"/{item.name}{' ' if item.takes_argument else ''}"
        elif looks_like_image(item) and self._workspace is not None:
            chip = self._attach_files([self._workspace / item])
            replacement = f"{chip} " if chip is not None else f"@{item} "
        else:
            # A directory keeps no space after it, so the user can go on typing into it.
            replacement = f"@{item}{'' if item.endswith('/') else ' '}"
        self._input.replace(
            replacement, trigger.start, trigger.end, maintain_selection_offset=False
        )
        self._sync_completion()
        if isinstance(item, SlashCommand) and not item.takes_argument:
            self._dismiss()  # the command is complete: Enter now sends it
        return True

    # --- file index

    def _ensure_index(self, *, refresh: bool) -> None:
        """Start indexing when there is no index, or (on `refresh`) when it has gone stale."""
        if self._workspace is None or self._indexing:
            return
        index = self._index
        stale = (
            index is not None and refresh and time.monotonic() - index.built_at > self.INDEX_MAX_AGE
        )
        if index is not None and not stale:
            return
        self._indexing = True
        self._index_generation += 1
        self.run_worker(
            partial(self._build_index, self._workspace, self._index_generation),
            thread=True,
            exclusive=True,
            group="file-index",
            exit_on_error=False,
        )

    def _build_index(self, root: Path, generation: int) -> None:
        """Walk the workspace (runs on a thread worker) and hand the index to the UI thread."""
        worker = get_current_worker()
        index = FileIndex([], time.monotonic())
        try:
            index = index_workspace(root, should_stop=lambda: worker.is_cancelled)
        finally:
            # Even if the walk failed, report back so the menu stops saying "indexing".
            self.post_message(self._IndexReady(generation, index))

    @on(_IndexReady)
    def _on_index_ready(self, message: _IndexReady) -> None:
        if message.generation != self._index_generation:
            return  # a walk of a workspace we have since left
        self._index = message.index
        self._indexing = False
        trigger = self._trigger
        if trigger is not None and trigger.kind == "@":
            self._show_paths(trigger.fragment, opening=False)


def _has_space(text: str) -> bool:
    return any(character.isspace() for character in text)


def _tidy(text: str) -> str:
    """The text without blank lines around it or trailing whitespace; indentation is kept."""
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()
