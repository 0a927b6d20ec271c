"""One exception family, printed by the CLI without a traceback.

Exit codes: 2 for bad input (config, usage, schema), 1 for run failures, 75 for a build
that stopped because no live node of its Ray cluster offers what a cell needs (sysexits'
``EX_TEMPFAIL``: finished cells are kept, the same command resumes).
"""

from __future__ import annotations

EXIT_RUN_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_NO_RESOURCES = 75


class ReconError(Exception):
    """Base of every error the harness reports to a person."""

    exit_code = EXIT_RUN_FAILURE


class ConfigError(ReconError):
    """A file or argument is wrong: names the file, the field path and the fix."""

    exit_code = EXIT_BAD_INPUT


class StoreError(ReconError):
    """The content-addressed store is missing an object or holds a corrupt one."""


class HarnessError(ReconError):
    """The harness itself (browser, engine, filesystem) failed; never a model failure."""


class PageError(ReconError):
    """The page being rendered (a build's own code) crashed or hung chromium, again on a
    fresh browser: the page's fault, never the harness's. Where the build is a Candidate's,
    the render cells record it as that build's failed point or check (recon.pipeline.kinds);
    where it is a case's own page (reference, starter), it fails the cell."""


class ResourcesUnavailable(ReconError):
    """A cell waited past its limit for resources no live node of the cluster offers: the
    build stops with its own exit code; its finished cells are kept for the rerun."""

    exit_code = EXIT_NO_RESOURCES
