"""The one viewport type: a named size from the registry.

A contract, a state, a motion transition, a sealed region and a sealed workflow name
viewports (``desktop``, ``mobile``, ``tablet``); only this registry sizes them. The
renderer takes the same :class:`Viewport` (``recon.render``), so no layer converts one
viewport type into another.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer, WithJsonSchema
from pydantic_core import PydanticCustomError

from recon.model.base import Strict
from recon.model.values import Id


class Viewport(Strict):
    """A named viewport size in CSS pixels (frozen: hashable, usable as a key)."""

    name: Id
    width: int = Field(ge=1, le=4096)
    height: int = Field(ge=1, le=4096)

    def __init__(self, *fields: Any, **data: Any) -> None:
        """Also positionally, as the renderer's tests write a size: ``Viewport("small",
        640, 480)`` is name, width, height."""
        data.update(zip(("name", "width", "height"), fields, strict=False))
        super().__init__(**data)


VIEWPORTS: Mapping[str, Viewport] = MappingProxyType(
    {
        "desktop": Viewport(name="desktop", width=1440, height=900),
        "mobile": Viewport(name="mobile", width=390, height=844),
        "tablet": Viewport(name="tablet", width=768, height=1024),
    }
)
"""The viewport registry: files name viewports, they never size them."""


def _known() -> str:
    return ", ".join(sorted(VIEWPORTS))


def _unknown(value: object) -> PydanticCustomError:
    return PydanticCustomError(
        "unknown_viewport",
        "unknown viewport {got} (known: {known}); use one of them",
        {"got": repr(value), "known": _known()},
    )


def _named_viewport(value: Any) -> Any:
    if isinstance(value, Viewport):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError(
            "viewport_name",
            "a viewport is a name (known: {known}); write one of them",
            {"known": _known()},
        )
    if value in VIEWPORTS:
        return VIEWPORTS[value]
    raise _unknown(value)


def _known_viewport(value: str) -> str:
    if value not in VIEWPORTS:
        raise _unknown(value)
    return value


ViewportName = Annotated[
    str,
    AfterValidator(_known_viewport),
    WithJsonSchema({"type": "string", "enum": sorted(VIEWPORTS)}),
]
"""The name of a viewport of the registry."""

NamedViewport = Annotated[
    Viewport,
    BeforeValidator(_named_viewport),
    PlainSerializer(lambda v: v.name, return_type=str),
    WithJsonSchema({"type": "string", "enum": sorted(VIEWPORTS)}),
]
"""A viewport written as its name, loaded as its registry :class:`Viewport`."""


def viewport(name: str) -> Viewport:
    """The registry's viewport of ``name`` (a name the loader has already checked)."""
    return VIEWPORTS[name]
