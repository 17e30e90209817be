"""The events the swarm acts on are named alike by the router, the App it makes and the docs a
person follows to make one by hand: an event missing from the docs is work GitHub never sends."""

from __future__ import annotations

import pytest

from agents.events.routing import EVENT_TITLES, EVENTS_ACTED_ON
from agents.roles.files import load_roles
from flows.cli.app_manifest import plan_apps
from sandbox.github.manifests import EVENT_PERMISSIONS
from tests.paths import ROOT


def _text(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def test_every_event_acted_on_has_its_github_title_and_the_permission_github_needs() -> None:
    assert set(EVENT_TITLES) == set(EVENTS_ACTED_ON)
    for event, permission in EVENTS_ACTED_ON.items():
        assert EVENT_PERMISSIONS[event] == permission


def test_the_app_the_swarm_makes_subscribes_to_every_event_acted_on() -> None:
    roles = load_roles(ROOT / "roles")
    [hook] = [p for p in plan_apps(roles, prefix="swarm", webhook_url="https://x/hook") if p.events]
    assert set(hook.events) == set(EVENTS_ACTED_ON)
    for event in hook.events:
        assert EVENTS_ACTED_ON[event] in hook.permissions


@pytest.mark.parametrize("doc", ["docs/events.md", "docs/quickstart.md"])
def test_the_docs_name_every_subscription_the_swarm_acts_on(doc: str) -> None:
    text = _text(doc)
    missing = [title for title in EVENT_TITLES.values() if f"**{title}**" not in text]
    assert missing == []
