"""Pydantic bases: polymorphic models that survive a JSON round trip, and fast private reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    ValidationInfo,
    computed_field,
    model_validator,
)


def _import_engine_kinds() -> None:
    from ohtui.sdk.utils.kinds import import_kind_modules

    import_kind_modules()


_kind_loaders: list[Callable[[], None]] = [_import_engine_kinds]
"""Called once each when a kind is unknown; the first imports the engine's own kinds (see
ohtui.sdk.utils.kinds: `import ohtui.sdk` leaves them to first use)."""


def register_kind_loader(loader: Callable[[], None]) -> None:
    """Call `loader` (which imports modules defining more kinds) when a kind is unknown."""
    _kind_loaders.append(loader)


class FastPrivateModel(BaseModel):
    """A model whose private attributes are read straight from `__pydantic_private__`.

    pydantic's own `__getattr__` first asks each private attribute's default whether it is
    a descriptor, raising and catching an AttributeError on every read (~3 µs). For models
    the engine reads on every event, whose private attributes are plain values.
    """

    model_config = ConfigDict(defer_build=True)

    if not TYPE_CHECKING:

        def __getattr__(self, item: str) -> Any:
            try:
                return object.__getattribute__(self, "__pydantic_private__")[item]
            except (AttributeError, KeyError, TypeError):
                return super().__getattr__(item)  # (pydantic's error, or a descriptor)


class DiscriminatedUnionMixin(BaseModel):
    """A model whose JSON carries its class name in `kind`.

    Validating a dict through any base class returns an instance of the subclass that
    `kind` names, so `Event.model_validate(json.loads(event.model_dump_json()))` gives back
    the same concrete event. Fields typed with a base class should be wrapped in
    `SerializeAsAny[...]` so the subclass's own fields are written too.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    _kinds: ClassVar[dict[str, type[DiscriminatedUnionMixin]] | None] = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def kind(self) -> str:
        """The concrete class name, used to restore it from JSON."""
        return type(self).__name__

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        DiscriminatedUnionMixin._kinds = None  # a new subclass: rebuild the index lazily

    @model_validator(mode="wrap")
    @classmethod
    def _resolve_kind(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo
    ) -> Self:
        if isinstance(data, dict) and "kind" in data:
            data = dict(data)
            kind = data.pop("kind")
            if kind != cls.__name__:
                return cls.resolve_kind(kind).model_validate(data, context=info.context)
        return handler(data)

    @classmethod
    def resolve_kind(cls, kind: str) -> type[Self]:
        """Return the subclass of `cls` named `kind`; ValueError when there is none."""
        if DiscriminatedUnionMixin._kinds is None:
            index: dict[str, type[DiscriminatedUnionMixin]] = {}
            stack: list[type[DiscriminatedUnionMixin]] = [DiscriminatedUnionMixin]
            while stack:
                sub = stack.pop()
                index.setdefault(sub.__name__, sub)
                stack.extend(sub.__subclasses__())
            DiscriminatedUnionMixin._kinds = index
        target = DiscriminatedUnionMixin._kinds.get(kind)
        if target is None and _kind_loaders:
            for loader in _kind_loaders:
                loader()
            _kind_loaders.clear()  # each loads once; new subclasses reset the index
            return cls.resolve_kind(kind)
        if target is None or not issubclass(target, cls):
            raise ValueError(
                f"Unexpected kind {kind!r} for {cls.__name__}: no such subclass is defined; "
                "import the module that defines it first"
            )
        return target
