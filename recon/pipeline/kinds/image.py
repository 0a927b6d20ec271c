"""The image cell: the sandbox an attempt runs in, named by its recipe.

Reads: the recipe (a parameter). Writes: ``image``, a blob naming the recipe (and, for
docker, its digest and tag), so that building the same recipe on another machine never
re-keys an attempt; engine image ids go in the attempt's run metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.errors import HarnessError
from recon.pipeline.kinds._base import Produced, blob
from recon.sandbox.rootfs import default_recipe, ensure_image

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def image(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    recipe = cell.params["recipe"]
    if recipe.get("kind") != "docker-debootstrap":
        return Produced({"image": blob(rt.store, recipe)})
    wanted = default_recipe()
    if wanted.to_json() != recipe:
        raise HarnessError(f"image cell {cell.name}: its recipe is not this harness's recipe")
    where = rt.project
    built = ensure_image(wanted, deps_root=where.deps_root, cache_dir=where.settings.apt_cache)
    out = {"recipe": recipe, "digest": wanted.digest, "tag": wanted.tag}
    return Produced({"image": blob(rt.store, out)}, timings={"build_s": built.took_s})
