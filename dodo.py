"""doit entry point: thin. ``doit release:demo``, ``doit list``, ``doit info <task>``."""

import sys
from pathlib import Path

from doit import get_var

from recon.errors import ReconError
from recon.pipeline.noop import DOIT_VARS, open_pipeline
from recon.project.settings import Settings

try:
    # `doit release:<id> regrade=<id>` re-grades a frozen release on purpose;
    # `executor=ray address=<host:port>` runs the long cells on a Ray cluster;
    # `wait_s=60 give_up_s=1800`: a cell no live node can run is said after wait_s, stops
    # the build after give_up_s; `progress=plain|rich` picks the progress view.
    # When nothing moved since the last build, a no-op's tasks come from the cached plan
    # (recon.pipeline.noop); otherwise recon.pipeline.Pipeline derives them.
    # The RECON_* settings are read here, once (recon.project.settings).
    PIPELINE = open_pipeline(
        Path(__file__).resolve().parent,
        Settings.from_env(),
        **{name: get_var(name) for name in DOIT_VARS},
    )
except ReconError as err:
    print(f"recon: {err}", file=sys.stderr)
    sys.exit(err.exit_code)

DOIT_CONFIG = PIPELINE.doit_config()
# `task_release` and one task creator per cell kind (every cell of every release
# definition, DESIGN §4): lazy when the releases' stamps hold (recon.pipeline.stamp).
globals().update(PIPELINE.task_creators())
