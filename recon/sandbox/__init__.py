"""recon.sandbox: attempt backends (native for development; docker for formal releases),
the sandbox image, the offline dependency store, the Docker engine, the egress proxy and the
attempt's model gateway on the host."""

from recon.sandbox.attempt import AttemptRun, harness_bug, parse_trace
from recon.sandbox.deps import Fetched, deps_dir, load_lock
from recon.sandbox.deps import fetch as fetch_deps
from recon.sandbox.deps import require as require_deps
from recon.sandbox.docker import (
    CONTAINER_PATHS,
    ENTRY_DIR,
    DockerRun,
    Mount,
    container_placeholders,
    notice,
    remove_stale_containers,
    run_docker,
)
from recon.sandbox.engine import EngineStart, engine_client, ensure_engine
from recon.sandbox.entry_files import copy_agent_files, entry_mount
from recon.sandbox.gateway import GatewayPlan
from recon.sandbox.image import native_recipe
from recon.sandbox.native import run_native
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
    "Fetched",
    "GatewayPlan",
    "ImageBuild",
    "ImageRecipe",
    "Mount",
    "Rule",
    "allowed",
    "build_image",
    "container_placeholders",
    "copy_agent_files",
    "default_recipe",
    "deps_dir",
    "engine_client",
    "ensure_engine",
    "ensure_image",
    "entry_mount",
    "fetch_deps",
    "find_image",
    "harness_bug",
    "load_lock",
    "native_recipe",
    "notice",
    "parse_allow",
    "parse_trace",
    "remove_stale_containers",
    "require_deps",
    "run_docker",
    "run_native",
]
