"""Where swarm keeps its files when ``SWARM_DATA_DIR`` is not set.

Its own module, free of pydantic, so the warm client in ``flows/cli/app.py`` finds the same place as
the settings model without paying for importing the settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_DATA_DIR = Path(".swarm")


def data_dir_from(environ: Mapping[str, str] = os.environ) -> Path:
    """The data directory the settings would resolve, read straight from the environment."""
    return Path(environ.get("SWARM_DATA_DIR") or DEFAULT_DATA_DIR)
