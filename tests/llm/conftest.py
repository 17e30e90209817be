from __future__ import annotations

import pytest

from agents.roles import Role
from agents.roles.files import load_roles
from tests.paths import ROLES_DIR


@pytest.fixture(scope="session")
def roles() -> dict[str, Role]:
    return load_roles(ROLES_DIR)
