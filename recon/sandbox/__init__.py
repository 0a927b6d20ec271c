"""recon.sandbox: attempt backends (native for development; docker for formal releases)."""

from recon.sandbox.image import native_recipe
from recon.sandbox.native import AttemptRun, parse_trace, run_native

__all__ = ["AttemptRun", "native_recipe", "parse_trace", "run_native"]
