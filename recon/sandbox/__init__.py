"""recon.sandbox: attempt backends (native for development; docker for formal releases),
the sandbox image, the offline dependency store, the Docker engine, the egress proxy and the
attempt's model gateway on the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.sandbox.attempt import AttemptRun as AttemptRun
    from recon.sandbox.attempt import harness_bug as harness_bug
    from recon.sandbox.attempt import parse_trace as parse_trace
    from recon.sandbox.deps import Fetched as Fetched
    from recon.sandbox.deps import deps_dir as deps_dir
    from recon.sandbox.deps import load_lock as load_lock
    from recon.sandbox.docker import CONTAINER_PATHS as CONTAINER_PATHS
    from recon.sandbox.docker import ENTRY_DIR as ENTRY_DIR
    from recon.sandbox.docker import DockerRun as DockerRun
    from recon.sandbox.docker import Mount as Mount
    from recon.sandbox.docker import container_placeholders as container_placeholders
    from recon.sandbox.docker import notice as notice
    from recon.sandbox.docker import remove_stale_containers as remove_stale_containers
    from recon.sandbox.docker import run_docker as run_docker
    from recon.sandbox.engine import EngineStart as EngineStart
    from recon.sandbox.engine import engine_client as engine_client
    from recon.sandbox.engine import ensure_engine as ensure_engine
    from recon.sandbox.entry_files import copy_agent_files as copy_agent_files
    from recon.sandbox.entry_files import entry_mount as entry_mount
    from recon.sandbox.gateway import GatewayPlan as GatewayPlan
    from recon.sandbox.image import native_recipe as native_recipe
    from recon.sandbox.native import run_native as run_native
    from recon.sandbox.proxy import EgressLog as EgressLog
    from recon.sandbox.proxy import EgressProxy as EgressProxy
    from recon.sandbox.proxy import Rule as Rule
    from recon.sandbox.proxy import allowed as allowed
    from recon.sandbox.proxy import parse_allow as parse_allow
    from recon.sandbox.rootfs import ImageBuild as ImageBuild
    from recon.sandbox.rootfs import ImageRecipe as ImageRecipe
    from recon.sandbox.rootfs import build_image as build_image
    from recon.sandbox.rootfs import default_recipe as default_recipe
    from recon.sandbox.rootfs import ensure_image as ensure_image
    from recon.sandbox.rootfs import find_image as find_image

_EXPORTS = {
    "AttemptRun": "recon.sandbox.attempt",
    "harness_bug": "recon.sandbox.attempt",
    "parse_trace": "recon.sandbox.attempt",
    "Fetched": "recon.sandbox.deps",
    "deps_dir": "recon.sandbox.deps",
    "load_lock": "recon.sandbox.deps",
    "CONTAINER_PATHS": "recon.sandbox.docker",
    "DockerRun": "recon.sandbox.docker",
    "ENTRY_DIR": "recon.sandbox.docker",
    "Mount": "recon.sandbox.docker",
    "container_placeholders": "recon.sandbox.docker",
    "notice": "recon.sandbox.docker",
    "remove_stale_containers": "recon.sandbox.docker",
    "run_docker": "recon.sandbox.docker",
    "EngineStart": "recon.sandbox.engine",
    "engine_client": "recon.sandbox.engine",
    "ensure_engine": "recon.sandbox.engine",
    "copy_agent_files": "recon.sandbox.entry_files",
    "entry_mount": "recon.sandbox.entry_files",
    "GatewayPlan": "recon.sandbox.gateway",
    "native_recipe": "recon.sandbox.image",
    "run_native": "recon.sandbox.native",
    "EgressLog": "recon.sandbox.proxy",
    "EgressProxy": "recon.sandbox.proxy",
    "Rule": "recon.sandbox.proxy",
    "allowed": "recon.sandbox.proxy",
    "parse_allow": "recon.sandbox.proxy",
    "ImageBuild": "recon.sandbox.rootfs",
    "ImageRecipe": "recon.sandbox.rootfs",
    "build_image": "recon.sandbox.rootfs",
    "default_recipe": "recon.sandbox.rootfs",
    "ensure_image": "recon.sandbox.rootfs",
    "find_image": "recon.sandbox.rootfs",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
