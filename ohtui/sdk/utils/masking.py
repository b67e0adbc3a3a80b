"""Finding secrets in text: the forms a value takes once encoded, and masking them.

A command can print a secret as itself or encoded (`base64`, `xxd -p`, a URL), so each value
is searched in all these forms. They are computed once per value; masking a text is then one
substring search per form, plus one pass over the runs of lines that look like a wrapped
base64 or hex dump, where a form may be split across lines.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Sequence
from urllib.parse import quote

SECRET_MASK = "<secret-hidden>"
MIN_FORM_LENGTH = 6
"""Encoded forms shorter than this are not searched for: they would match ordinary text."""

_ESCAPE = re.compile("%[0-9A-F]{2}")
_BASE64_SKIP = (0, 2, 3)
"""How many leading characters also encode the bytes before a value that starts 0, 1 or 2
bytes into a 3-byte base64 group."""
_ENCODED_LINE = r"[A-Za-z0-9+/=_-]++\r?$"
_ENCODED_RUN = re.compile(rf"(?m)^{_ENCODED_LINE}(?:\n{_ENCODED_LINE})+")
"""Two or more whole lines of base64 or hex characters, as `base64` and `xxd -p` wrap them."""


def encoded_forms(value: str) -> set[str]:
    """`value` and its base64 and base64url forms (padded, unpadded, and the part a longer
    base64 text holding it contains at each byte alignment), hex in lower and upper case, and
    percent-encoding with upper- and lower-case escapes."""
    raw = value.encode()
    percent = quote(value, safe="")
    forms = {raw.hex(), raw.hex().upper(), percent, _ESCAPE.sub(_lower, percent)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode()
        forms |= {whole, whole.rstrip("=")}
        forms |= {_inside_base64(encode, raw, offset) for offset in range(3)}
    return {value} | {form for form in forms if len(form) >= MIN_FORM_LENGTH}


def forms_to_mask(values: Iterable[str]) -> tuple[str, ...]:
    """Every form of every value, longest first (so a value inside a longer one leaves no
    partial leftovers): what `mask_text` takes."""
    forms: set[str] = set()
    for value in values:
        forms |= encoded_forms(value)
    return tuple(sorted(forms, key=len, reverse=True))


def _lower(match: re.Match[str]) -> str:
    return match.group().lower()


def _inside_base64(encode: Callable[[bytes], bytes], raw: bytes, offset: int) -> str:
    """The characters that only `raw`'s bytes decide when it starts `offset` bytes into a
    3-byte group of a longer base64 text (the characters at either end mix in other bytes)."""
    total = offset + len(raw)
    end = total // 3 * 4 + total % 3
    return encode(bytes(offset) + raw).decode()[_BASE64_SKIP[offset] : end]


def mask_text(text: str, forms: Sequence[str]) -> str:
    """`text` with every occurrence of `forms` (longest first) replaced by the mask, also
    where a wrapped dump splits one across lines."""
    for form in forms:
        if form in text:
            text = text.replace(form, SECRET_MASK)
    if "\n" in text:
        text = _ENCODED_RUN.sub(lambda run: _mask_run(run.group(), forms), text)
    return text


def _mask_run(run: str, forms: Sequence[str]) -> str:
    """A run of dump lines with the forms found in its joined text masked; the lines a form
    spans become one."""
    joined = run.replace("\r", "").replace("\n", "")
    spans: list[tuple[int, int]] = []
    for form in forms:
        start = joined.find(form)
        while start != -1:
            spans.append((start, start + len(form)))
            start = joined.find(form, start + 1)
    if not spans:
        return run
    where = [index for index, char in enumerate(run) if char not in "\r\n"]
    pieces: list[str] = []
    done = 0
    for start, end in sorted(spans):
        if where[start] < done:  # overlaps a span already masked: extend it
            done = max(done, where[end - 1] + 1)
            continue
        pieces += [run[done : where[start]], SECRET_MASK]
        done = where[end - 1] + 1
    pieces.append(run[done:])
    return "".join(pieces)


def partial_at_end(text: str, form: str, min_size: int = 1) -> int:
    """The length of the longest end of `text` that begins `form` without holding all of it
    (at least `min_size` long), or 0."""
    first = form[0]
    index = text.find(first, max(len(text) - len(form) + 1, 0))
    while index != -1 and len(text) - index >= min_size:
        if form.startswith(text[index:]):
            return len(text) - index
        index = text.find(first, index + 1)
    return 0


def partial_at_start(text: str, form: str, min_size: int = 1) -> int:
    """The length of the longest start of `text` that ends `form` without holding all of it
    (at least `min_size` long), or 0."""
    last = form[-1]
    index = text.rfind(last, 0, min(len(form) - 1, len(text)))
    while index != -1 and index + 1 >= min_size:
        if form.endswith(text[: index + 1]):
            return index + 1
        index = text.rfind(last, 0, index)
    return 0
