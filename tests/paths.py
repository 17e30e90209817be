"""The checkout's folders, for the tests that run its programs or read its files."""

from __future__ import annotations

from pathlib import Path

# tests/ sits at the top of the checkout.
ROOT = Path(__file__).resolve().parents[1]
ROLES_DIR = ROOT / "roles"
