"""recon.sandbox: attempt backends (native for development; docker for formal releases),
the sandbox image, the Docker engine and the egress proxy."""

from recon.sandbox.docker import (
    CONTAINER_PATHS,
    ENTRY_DIR,
    DockerRun,
    Mount,
    remove_stale_containers,
    run_docker,
)
from recon.sandbox.engine import EngineStart, engine_client, ensure_engine
from recon.sandbox.image import native_recipe
from recon.sandbox.native import AttemptRun, parse_trace, run_native
from recon.sandbox.proxy import EgressLog, EgressProxy, Rule, allowed, parse_allow
from recon.sandbox.rootfs import (
    ImageBuild,
    ImageRecipe,
    build_image,
    default_recipe,
    ensure_image,
    find_image,
)

__all__ = [
    "CONTAINER_PATHS",
    "ENTRY_DIR",
    "AttemptRun",
    "DockerRun",
    "EgressLog",
    "EgressProxy",
    "EngineStart",
    "ImageBuild",
    "ImageRecipe",
    "Mount",
    "Rule",
    "allowed",
    "build_image",
    "default_recipe",
    "engine_client",
    "ensure_engine",
    "ensure_image",
    "find_image",
    "native_recipe",
    "parse_allow",
    "parse_trace",
    "remove_stale_containers",
    "run_docker",
    "run_native",
]
