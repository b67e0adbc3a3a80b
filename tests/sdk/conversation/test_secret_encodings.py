"""Masking catches a secret's encoded forms too: base64 (standard and URL-safe, with and without
padding, and inside a longer base64 text at any of its three byte alignments, also wrapped over
lines as `base64` prints it), hex (lower and upper case, also as `xxd -p` wraps it) and
percent-encoding; in whole texts, in streamed pieces, in cut-out fragments and in saved files.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import random
import re
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from ohtui.sdk.conversation import SECRET_MASK, SecretRegistry
from ohtui.sdk.conversation.secret_registry import StreamMasker
from ohtui.sdk.tools.terminal.executor import mask_file

SECRET = "sk-proj-Zq9/Xw+7Lm_2bV8~nR4.kP1=tY6"
"""A key with characters that base64, URL-safe base64 and percent-encoding all treat apart."""
RAW = SECRET.encode()


@pytest.fixture
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    registry.update_secrets({"API_KEY": SECRET})
    return registry


def encodings() -> dict[str, str]:
    b64 = base64.b64encode(RAW).decode()
    url = base64.urlsafe_b64encode(RAW).decode()
    return {
        "base64": b64,
        "base64 without padding": b64.rstrip("="),
        "base64url": url,
        "base64url without padding": url.rstrip("="),
        "hex": RAW.hex(),
        "HEX": RAW.hex().upper(),
        "percent": quote(SECRET, safe=""),
        "percent, lower-case escapes": re.sub(
            "%[0-9A-F]{2}", lambda m: m.group().lower(), quote(SECRET, safe="")
        ),
    }


@pytest.mark.parametrize("form", sorted(encodings()))
def test_each_standalone_encoding_is_masked(registry: SecretRegistry, form: str) -> None:
    encoded = encodings()[form]
    assert encoded != SECRET
    masked = registry.mask_secrets_in_output(f"token: {encoded} (end)")
    assert encoded not in masked
    assert masked.startswith("token: ") and masked.endswith(" (end)")
    assert SECRET_MASK in masked


@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
@pytest.mark.parametrize("before", range(6))
def test_a_secret_inside_a_longer_base64_text_is_masked_at_every_alignment(
    registry: SecretRegistry, encode: object, before: int
) -> None:
    assert callable(encode)
    payload = b"x" * before + b'{"key": "' + RAW + b'", "user": "ada"}'
    encoded: str = encode(payload).decode()
    assert reveals_the_secret(encoded)
    masked = registry.mask_secrets_in_output(encoded)
    assert SECRET_MASK in masked
    assert not reveals_the_secret(masked)


def reveals_the_secret(text: str) -> bool:
    """Whether any piece of `text` between masks decodes (as base64 of either alphabet, at any
    alignment, or as hex) to 6 or more bytes of the secret in a row."""
    windows = [RAW[i : i + 6] for i in range(len(RAW) - 5)]
    for piece in text.split(SECRET_MASK):
        decoded = b"|".join(_decodings("".join(piece.split())))
        if any(window in decoded for window in windows):
            return True
    return False


def _decodings(text: str) -> list[bytes]:
    found = []
    cleaned = text.replace("-", "+").replace("_", "/").replace("=", "")
    for skip in range(4):
        part = cleaned[skip:]
        with contextlib.suppress(binascii.Error):
            found.append(base64.b64decode(part[: len(part) - len(part) % 4]))
    for skip in range(2):
        part = re.sub("[^0-9a-fA-F]", "", text)[skip:]
        with contextlib.suppress(ValueError):
            found.append(bytes.fromhex(part[: len(part) - len(part) % 2]))
    return found


def test_wrapped_base64_and_hex_dumps_are_masked(registry: SecretRegistry, tmp_path: Path) -> None:
    for before in range(3):
        source = tmp_path / "secret.txt"
        source.write_text(("padding " * 5) + "x" * before + SECRET + "\n")
        for command in (["base64", "-w", "20"], ["base64"], ["xxd", "-p"]):
            output = subprocess.run(
                [*command, str(source)], capture_output=True, text=True, check=True
            ).stdout
            assert "\n" in output.strip() and reveals_the_secret(output)
            masked = registry.mask_secrets_in_output("before\n" + output + "after\n")
            assert SECRET_MASK in masked, command
            assert not reveals_the_secret(masked), command
            assert masked.startswith("before\n") and masked.endswith("\nafter\n")


def test_ordinary_text_and_other_base64_are_left_alone(registry: SecretRegistry) -> None:
    text = (
        "def main():\n    return 0\n"
        + base64.b64encode(b"some other payload that is not secret at all").decode()
        + "\n"
        + "0123456789abcdef" * 8
        + "\n%2Fusr%2Flib\n"
    )
    assert registry.mask_secrets_in_output(text) == text


def test_a_streamed_encoding_split_across_pieces_is_masked(registry: SecretRegistry) -> None:
    encoded = RAW.hex()
    text = f"the hex is {encoded}, done"
    masker = StreamMasker(registry)
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    shown = [masker.feed(piece) for piece in pieces] + [masker.flush()]
    assert "".join(shown) == f"the hex is {SECRET_MASK}, done"
    for piece in shown:
        assert encoded[:12] not in piece


def test_a_fragment_cut_in_the_middle_of_an_encoding_hides_the_part_it_holds(
    registry: SecretRegistry,
) -> None:
    encoded = base64.b64encode(RAW).decode()
    head = registry.mask_fragment("start " + encoded[:30], cut_before=False, cut_after=True)
    tail = registry.mask_fragment(encoded[-30:] + " end", cut_before=True, cut_after=False)
    assert head == f"start {SECRET_MASK}"
    assert tail == f"{SECRET_MASK} end"


def test_a_saved_output_file_loses_the_encodings_too(
    registry: SecretRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "output.txt"
    forms = encodings()
    path.write_bytes(("\n".join(forms.values()) + "\n").encode() + b"\x00\xff binary tail")
    mask_file(path, registry)
    saved = path.read_bytes()
    for encoded in forms.values():
        assert encoded.encode() not in saved
    assert saved.count(SECRET_MASK.encode()) == len(set(forms.values()))
    assert saved.endswith(b"\x00\xff binary tail")


def test_a_value_registered_for_masking_only_is_masked_but_never_exported_or_saved() -> None:
    registry = SecretRegistry()
    key = "llm-key-0123456789abcdef"
    registry.add_masked_value(key)
    assert registry.has_values
    text = f"key {key} and " + base64.b64encode(key.encode()).decode()
    assert registry.mask_secrets_in_output(text) == f"key {SECRET_MASK} and {SECRET_MASK}"
    assert registry.secret_sources == {}
    assert registry.get_secrets_as_env_vars("echo $LLM_API_KEY $API_KEY") == {}
    assert "llm-key" not in registry.model_dump_json(context={"expose_secrets": True})


def test_masking_a_big_output_with_five_secrets_stays_fast() -> None:
    rng = random.Random(8)
    registry = SecretRegistry()
    secrets = {
        f"KEY_{i}": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(48))
        for i in range(5)
    }
    registry.update_secrets(secrets)
    words = ["def", "return", "self", "value", "import", "the", "0x1f", "==", "\n", "    "]
    text = " ".join(rng.choice(words) for _ in range(6000))[:30_000]
    text = text[:15_000] + secrets["KEY_3"] + text[15_000:]
    registry.mask_secrets_in_output(text)  # the forms are computed once, here
    runs = 20
    started = time.perf_counter()
    for _ in range(runs):
        masked = registry.mask_secrets_in_output(text)
    per_call = (time.perf_counter() - started) / runs
    assert masked.count(SECRET_MASK) == 1
    assert per_call < 0.05, f"{per_call * 1000:.1f} ms to mask 30 KB"
