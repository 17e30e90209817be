from __future__ import annotations

from pathlib import Path

import pytest

from agents.roles import Role
from agents.roles.files import load_roles

ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


@pytest.fixture(scope="session")
def roles() -> dict[str, Role]:
    return load_roles(ROLES_DIR)
