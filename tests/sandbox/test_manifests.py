"""The sandbox runs GitHub's App manifest flow as github.com does: the new-App page takes a
manifest, its button makes the App and sends back a one-time code, the code turns into the App
once, and the install page installs it and sends the browser to the App's setup URL."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from sandbox.github.manifests import ManifestRefused, check_manifest
from sandbox.server import SandboxServer

MANIFEST: dict[str, object] = {
    "name": "acme-test-bot",
    "url": "https://example.com",
    "redirect_url": "http://127.0.0.1:9/created",
    "setup_url": "http://127.0.0.1:9/installed/default",
    "hook_attributes": {"url": "https://example.com/hook"},
    "default_permissions": {"pull_requests": "write", "metadata": "read"},
    "default_events": ["pull_request"],
}


@pytest.fixture
def web() -> Iterator[httpx.Client]:
    with SandboxServer() as server, httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def _as_app(body: dict[str, object]) -> dict[str, str]:
    """The headers of a call as the new App, signed with the key the conversion handed out."""
    now = int(time.time())
    claims = {"iat": now - 60, "exp": now + 500, "iss": str(body["id"])}
    return {"Authorization": f"Bearer {jwt.encode(claims, str(body['pem']), algorithm='RS256')}"}


def _made(web: httpx.Client, manifest: dict[str, object]) -> str:
    page = web.post(
        "/organizations/acme/settings/apps/new?state=s1", data={"manifest": json.dumps(manifest)}
    )
    assert page.status_code == 200 and "Create GitHub App for acme" in page.text
    made = web.post(
        "/settings/apps/new/confirm",
        data={
            "manifest": json.dumps(manifest),
            "state": "s1",
            "owner": "acme",
            "name": "acme-test-bot",
        },
    )
    assert made.status_code == 302
    query = parse_qs(urlsplit(made.headers["location"]).query)
    assert query["state"] == ["s1"]
    return query["code"][0]


def test_a_code_turns_into_its_app_once_with_a_key_that_signs_for_it(web: httpx.Client) -> None:
    code = _made(web, MANIFEST)
    app = web.post(f"/api/v3/app-manifests/{code}/conversions")
    assert app.status_code == 201
    body = app.json()
    assert body["slug"] == "acme-test-bot" and body["owner"]["login"] == "acme"
    assert body["permissions"] == MANIFEST["default_permissions"]
    assert body["events"] == ["pull_request"] and body["webhook_secret"]
    assert web.post(f"/app-manifests/{code}/conversions").status_code == 404
    now = int(time.time())
    token = jwt.encode(
        {"iat": now - 60, "exp": now + 500, "iss": str(body["id"])}, body["pem"], algorithm="RS256"
    )
    seen = web.get("/app", headers={"Authorization": f"Bearer {token}"})
    assert seen.status_code == 200 and seen.json()["slug"] == "acme-test-bot"
    # GET /app names the permissions and events the registration asked for, as GitHub does.
    assert seen.json()["permissions"] == MANIFEST["default_permissions"]
    assert seen.json()["events"] == ["pull_request"]


def test_installing_sends_the_browser_to_the_setup_url_with_the_installation(
    web: httpx.Client,
) -> None:
    body = web.post(f"/app-manifests/{_made(web, MANIFEST)}/conversions").json()
    page = web.get("/apps/acme-test-bot/installations/new?state=s2")
    assert page.status_code == 200 and "acme/widgets" in page.text
    done = web.post(
        "/apps/acme-test-bot/installations",
        data={"selection": "selected", "repository": ["acme/widgets"], "state": "s2"},
    )
    assert done.status_code == 302
    where = urlsplit(done.headers["location"])
    assert where.path == "/installed/default"
    query = parse_qs(where.query)
    assert query["setup_action"] == ["install"] and query["state"] == ["s2"]
    now = int(time.time())
    token = jwt.encode(
        {"iat": now - 60, "exp": now + 500, "iss": str(body["id"])}, body["pem"], algorithm="RS256"
    )
    listed = web.get("/app/installations", headers={"Authorization": f"Bearer {token}"}).json()
    assert [i["id"] for i in listed] == [int(query["installation_id"][0])]
    assert listed[0]["repository_selection"] == "selected"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"default_events": ["issues"]}, "Default events unsupported: issues (needs issues)"),
        ({"redirect_url": ""}, "redirect_url can't be blank"),
        ({"default_permissions": {"issues": "all"}}, "default_permissions: issues: 'all'"),
    ],
    ids=["event-without-its-permission", "no-redirect", "bad-level"],
)
def test_a_manifest_github_would_refuse_is_refused(change: dict[str, object], problem: str) -> None:
    with pytest.raises(ManifestRefused, match=problem.replace("(", r"\(").replace(")", r"\)")):
        check_manifest(json.dumps({**MANIFEST, **change}))
