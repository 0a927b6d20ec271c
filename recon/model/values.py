"""Constrained values shared by the file formats: ids, routes, relative paths, weights.

Each is a plain type with its checks attached, so that every format refuses the same bad
value with the same message: a route is a normalised absolute URL path and nothing more
(no ``..``, no ``//host``, no query, fragment, control character or 5,000-character
string); a relative path stays inside its folder; a weight is finite and bounded.
"""

from __future__ import annotations

import posixpath
import re
from typing import Annotated

from pydantic import AfterValidator, Field

Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]

MAX_ROUTE = 256
MAX_PATH = 256
_ROUTE_SEGMENT = re.compile(r"^[A-Za-z0-9._!$&'()*+,=:@-]+$")
_PATH_SEGMENT = re.compile(r"^[A-Za-z0-9._@+-]+$")


def check_route(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError("a route is a URL path; start it with '/' (like /about)")
    if len(value) > MAX_ROUTE:
        raise ValueError(f"a route is at most {MAX_ROUTE} characters, not {len(value)}; shorten it")
    if "?" in value or "#" in value:
        raise ValueError("a route is a path only: drop the query (?…) and fragment (#…)")
    if value.startswith("//"):
        raise ValueError("a route starting with '//' names another host; write one '/'")
    segments = value[1:].removesuffix("/").split("/") if value != "/" else []
    for segment in segments:
        if segment in (".", ".."):
            raise ValueError("a route has no '.' or '..' segments; write the path they lead to")
        if not _ROUTE_SEGMENT.match(segment):
            raise ValueError(
                "a route is a normalised path of letters, digits and . _ - ! $ & ' ( ) * + , "
                "= : @ between single '/'; remove any space, '~', '%', '\\', ';', doubled '/' "
                "or control character"
            )
    return value


def check_relative_path(value: str) -> str:
    if not value or len(value) > MAX_PATH:
        raise ValueError(f"a path has 1 to {MAX_PATH} characters; give a file or folder name")
    if value.startswith("/"):
        raise ValueError("must be a path inside its folder; make it relative (no leading '/')")
    parts = value.split("/")
    if ".." in parts:
        raise ValueError("must stay inside its folder; remove the '..'")
    if value == "." or posixpath.normpath(value) != value:
        raise ValueError(
            f"write the path normalised ({posixpath.normpath(value)!r}); "
            "'.' and empty segments are not allowed"
        )
    if not all(_PATH_SEGMENT.match(part) for part in parts):
        raise ValueError(
            "a path is made of letters, digits and . _ @ + - between single '/'; "
            "remove any space, '\\' or control character"
        )
    return value


Route = Annotated[str, AfterValidator(check_route)]
"""An absolute, normalised URL path: ``/``, ``/about``, ``/docs/``, ``/blog/post-1``."""

RelativePath = Annotated[str, AfterValidator(check_relative_path)]
"""A normalised path inside a folder: ``site``, ``scripted/faithful.py``; never ``.``."""

Weight = Annotated[float, Field(gt=0, le=100)]
"""The relative weight of one check, region or workflow within its dimension."""

Share = Annotated[float, Field(ge=0, le=1)]


def summing_to_one(value: dict[str, float], tolerance: float) -> dict[str, float]:
    """``value`` when its shares sum to 1 within ``tolerance`` (dimension weights)."""
    total = sum(value.values())
    if abs(total - 1.0) > tolerance:
        raise ValueError(f"weights must sum to 1, they sum to {total:g}; rescale them")
    return value


"""A fraction: a dimension's weight in the total, a penalty, a threshold."""

MAX_PAGE_PX = 32_768
"""The tallest full-page capture a box may address."""
MAX_SCROLL_PX = 100_000
