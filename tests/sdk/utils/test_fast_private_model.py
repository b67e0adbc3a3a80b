"""FastPrivateModel reads private attributes as pydantic does, only faster."""

import pytest
from pydantic import PrivateAttr

from ohtui.sdk.conversation.secret_registry import SecretRegistry
from ohtui.sdk.conversation.state import ConversationState
from ohtui.sdk.utils.models import FastPrivateModel


class Counter(FastPrivateModel):
    name: str = "c"
    _count: int = PrivateAttr(default=0)
    _items: list[int] = PrivateAttr(default_factory=list)


def test_private_attributes_read_write_and_stay_per_instance() -> None:
    a, b = Counter(), Counter()
    a._count += 2
    a._items.append(1)
    assert (a._count, a._items) == (2, [1])
    assert (b._count, b._items) == (0, [])
    assert a.model_dump() == {"name": "c"}


def test_missing_attributes_raise_pydantics_attribute_error() -> None:
    counter = Counter()
    with pytest.raises(AttributeError, match="'Counter' object has no attribute '_nothing'"):
        _ = counter._nothing
    assert not hasattr(counter, "nothing")
    del counter._count
    with pytest.raises(AttributeError, match="_count"):
        _ = counter._count


def test_a_copy_has_its_own_private_values() -> None:
    original = Counter()
    original._count = 5
    copy = original.model_copy(deep=True)
    copy._count = 7
    assert (original._count, copy._count) == (5, 7)


def test_the_models_read_on_every_event_use_it() -> None:
    assert issubclass(ConversationState, FastPrivateModel)
    assert issubclass(SecretRegistry, FastPrivateModel)
