from __future__ import annotations

from pathlib import Path

import pytest

from agents.role_files import load_roles
from agents.roles import Role

ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


@pytest.fixture(scope="session")
def roles() -> dict[str, Role]:
    return load_roles(ROLES_DIR)
