"""What went wrong, in words for the user: an error as a status-bar phrase, a notice or a
sentence."""

from __future__ import annotations


def in_words(error: BaseException, limit: int = 80) -> str:
    """What went wrong, short enough for the status bar (the whole message is in the
    conversation): an LLM error's summary, else the message's first sentence."""
    from ohtui.sdk.llm import LLMError

    if isinstance(error, LLMError):
        return error.summary
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    end = line.find(". ")
    sentence = line[: end + 1] if end >= 0 else line
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def describe(exc: BaseException) -> str:
    """A message for the user: our errors say what to do; others get their type named."""
    text = str(exc) or type(exc).__name__
    from_engine = type(exc).__module__.startswith(("ohtui.", "ohtui"))
    return text if from_engine else f"{type(exc).__name__}: {text}"


def sentence(text: str) -> str:
    """An engine message as a sentence: capitalised, with a full stop."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."
