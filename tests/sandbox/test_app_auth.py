"""App JWT checks, installation token minting, down-scoping, revocation and identity endpoints."""

from __future__ import annotations

import string
import time

import jwt
import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.models import AppPermissions, InstallationToken

from sandbox.github.auth import JWT_EXPIRED, JWT_IAT_FUTURE, JWT_NOT_DECODED, JWT_TOO_LONG
from sandbox.github.seed import (
    REVIEWER_APP_ID,
    REVIEWER_EVENTS,
    REVIEWER_INSTALLATION_ID,
    TRIAGE_APP_ID,
    TRIAGE_INSTALLATION_ID,
    app_key,
)
from sandbox.github.tokens import NO_SUCH_REPO, NOT_GRANTED
from sandbox.server import SandboxServer
from tests.sandbox.clients import app_client, mint, token_client


def granted(minted: InstallationToken) -> dict[str, object]:
    """The permissions a mint answer carries (the field is optional in GitHub's schema)."""
    assert isinstance(minted.permissions, AppPermissions), minted.permissions
    return minted.permissions.model_dump(exclude_unset=True)


def _jwt(
    sandbox: SandboxServer,
    *,
    iss: object = REVIEWER_APP_ID,
    iat: float,
    exp: float,
    slug: str = "swarm-reviewer",
) -> str:
    return jwt.encode(
        {"iss": str(iss), "iat": int(iat), "exp": int(exp)}, app_key(slug), algorithm="RS256"
    )


def _get_app(sandbox: SandboxServer, token: str) -> RequestFailed:
    gh = GitHub(base_url=sandbox.url, auto_retry=False, http_cache=False, ssl_verify=False)
    with pytest.raises(RequestFailed) as info:
        gh.request("GET", "/app", headers={"Authorization": f"Bearer {token}"})
    return info.value


def test_get_app_with_the_app_jwt_returns_its_slug(sandbox: SandboxServer) -> None:
    gh = app_client(sandbox.url, sandbox.state)
    app = gh.rest.apps.get_authenticated().parsed_data
    assert app is not None and app.slug == "swarm-reviewer" and app.id == REVIEWER_APP_ID
    gh_triage = app_client(sandbox.url, sandbox.state, TRIAGE_APP_ID)
    triage = gh_triage.rest.apps.get_authenticated().parsed_data
    assert triage is not None and triage.slug == "swarm-triage"


def test_get_app_names_the_apps_permissions_and_events_from_its_registration(
    sandbox: SandboxServer,
) -> None:
    """docs.github.com/rest/apps/apps "Get the authenticated app": ``permissions`` and
    ``events``, read through githubkit's model of the answer."""
    sandbox.state.apps[REVIEWER_APP_ID].permissions["contents"] = "write"
    gh = app_client(sandbox.url, sandbox.state)
    app = gh.rest.apps.get_authenticated().parsed_data
    assert app is not None
    assert app.permissions.model_dump(exclude_unset=True) == {
        "pull_requests": "write",
        "issues": "write",
        "contents": "write",
        "metadata": "read",
    }
    assert sorted(app.events) == sorted(REVIEWER_EVENTS)
    # The installation keeps what its owner accepted: contents stays read until they accept.
    listed = gh.request("GET", "/app/installations").json()
    [inst] = [i for i in listed if i["id"] == REVIEWER_INSTALLATION_ID]
    assert inst["permissions"]["contents"] == "read"


def test_jwt_signed_with_another_apps_key_is_refused(sandbox: SandboxServer) -> None:
    now = time.time()
    forged = _jwt(sandbox, iat=now - 60, exp=now + 500, slug="swarm-triage")
    err = _get_app(sandbox, forged)
    assert err.response.status_code == 401
    assert err.response.json()["message"] == JWT_NOT_DECODED


def test_jwt_for_an_unknown_issuer_is_refused(sandbox: SandboxServer) -> None:
    now = time.time()
    err = _get_app(sandbox, _jwt(sandbox, iss=9999, iat=now - 60, exp=now + 500))
    assert err.response.status_code == 401
    assert err.response.json()["message"] == "Integration not found"


@pytest.mark.parametrize(
    ("iat_offset", "exp_offset", "message"),
    [(-900, -300, JWT_EXPIRED), (-60, 700, JWT_TOO_LONG), (300, 500, JWT_IAT_FUTURE)],
    ids=["expired", "lifetime-over-10-minutes", "issued-in-the-future"],
)
def test_jwt_time_claims_are_checked(
    sandbox: SandboxServer, iat_offset: int, exp_offset: int, message: str
) -> None:
    now = time.time()
    err = _get_app(sandbox, _jwt(sandbox, iat=now + iat_offset, exp=now + exp_offset))
    assert err.response.status_code == 401
    assert err.response.json()["message"] == message


def test_a_minted_token_is_long_expires_in_an_hour_and_lists_full_repositories(
    sandbox: SandboxServer,
) -> None:
    gh = app_client(sandbox.url, sandbox.state)
    minted = gh.rest.apps.create_installation_access_token(REVIEWER_INSTALLATION_ID).parsed_data
    assert minted.token.startswith("ghs_") and len(minted.token) >= 100 and "." not in minted.token
    expires = time.mktime(time.strptime(minted.expires_at, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(expires - (sandbox.state.clock.now() + 3600)) < 5
    assert minted.repository_selection == "all"
    assert sorted(r.full_name for r in minted.repositories or []) == [
        "acme/docs",
        "acme/gadgets",
        "acme/widgets",
    ]
    perms = granted(minted)
    assert perms == {
        "pull_requests": "write",
        "issues": "write",
        "contents": "read",
        "metadata": "read",
    }


def test_long_token_option_mints_dotted_tokens_of_about_520_chars(sandbox: SandboxServer) -> None:
    sandbox.state.knobs.token_format = "long"
    token = mint(sandbox.url, sandbox.state)
    assert 500 <= len(token) <= 540 and token.count(".") == 2
    gh = token_client(sandbox.url, token)
    assert gh.rest.repos.get("acme", "widgets").parsed_data.name == "widgets"


def test_stateless_tokens_are_ghs_app_id_and_a_jwt_of_about_520_chars(
    sandbox: SandboxServer,
) -> None:
    sandbox.state.knobs.token_format = "stateless"
    token = mint(sandbox.url, sandbox.state)
    prefix, app_id, jwt = token.split("_", 2)
    assert (prefix, app_id) == ("ghs", str(REVIEWER_APP_ID))
    assert 480 <= len(token) <= 560 and jwt.startswith("eyJ") and jwt.count(".") == 2
    assert set(token) - set(string.ascii_letters + string.digits) == {"_", ".", "-"}
    gh = token_client(sandbox.url, token)
    assert gh.rest.repos.get("acme", "widgets").parsed_data.name == "widgets"


def test_down_scoped_token_gets_only_what_it_asked(sandbox: SandboxServer) -> None:
    gh = app_client(sandbox.url, sandbox.state)
    minted = gh.rest.apps.create_installation_access_token(
        REVIEWER_INSTALLATION_ID, repositories=["widgets"], permissions={"pull_requests": "read"}
    ).parsed_data
    assert minted.repository_selection == "selected"
    assert [r.name for r in minted.repositories or []] == ["widgets"]
    assert granted(minted) == {
        "pull_requests": "read",
        "metadata": "read",
    }
    scoped = token_client(sandbox.url, minted.token)
    assert scoped.rest.pulls.list("acme", "widgets").parsed_data
    with pytest.raises(RequestFailed) as info:
        scoped.rest.pulls.create_review(
            "acme", "widgets", 1, data={"body": "x", "event": "COMMENT"}
        )
    assert info.value.response.status_code == 403
    repos = scoped.rest.apps.list_repos_accessible_to_installation().parsed_data
    assert repos.total_count == 1 and repos.repositories[0].full_name == "acme/widgets"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"permissions": {"contents": "write"}}, NOT_GRANTED),
        ({"permissions": {"administration": "read"}}, NOT_GRANTED),
        ({"repositories": ["no-such-repo"]}, NO_SUCH_REPO),
        ({"repository_ids": [424242]}, NO_SUCH_REPO),
        (
            {"permissions": {"pull_request": "write"}},
            'Invalid request.\n\n"pull_request" is not a permitted key.',
        ),
    ],
    ids=[
        "write-beyond-grant",
        "ungranted-permission",
        "unknown-repo-name",
        "unknown-repo-id",
        "misspelled-key",
    ],
)
def test_mint_refuses_requests_beyond_the_installation(
    sandbox: SandboxServer, data: dict[str, object], message: str
) -> None:
    gh = app_client(sandbox.url, sandbox.state)
    with pytest.raises(RequestFailed) as info:
        gh.request(
            "POST", f"/app/installations/{REVIEWER_INSTALLATION_ID}/access_tokens", json=data
        )
    assert info.value.response.status_code == 422
    assert info.value.response.json()["message"] == message


def test_triage_app_cannot_mint_for_the_reviewer_installation(sandbox: SandboxServer) -> None:
    gh = app_client(sandbox.url, sandbox.state, TRIAGE_APP_ID)
    with pytest.raises(RequestFailed) as info:
        gh.rest.apps.create_installation_access_token(REVIEWER_INSTALLATION_ID)
    assert info.value.response.status_code == 404
    assert gh.rest.apps.create_installation_access_token(TRIAGE_INSTALLATION_ID).parsed_data.token


def test_excess_knob_makes_the_mint_response_claim_more_than_asked(sandbox: SandboxServer) -> None:
    sandbox.state.knobs.mint_extra_permissions = {"contents": "write"}
    sandbox.state.knobs.mint_extra_repositories = ["gadgets"]
    gh = app_client(sandbox.url, sandbox.state)
    minted = gh.rest.apps.create_installation_access_token(
        REVIEWER_INSTALLATION_ID, repositories=["widgets"], permissions={"pull_requests": "write"}
    ).parsed_data
    assert granted(minted)["contents"] == "write"
    assert sorted(r.name for r in minted.repositories or []) == ["gadgets", "widgets"]


def test_revoked_token_answers_bad_credentials(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    assert gh.rest.apps.revoke_installation_access_token().status_code == 204
    with pytest.raises(RequestFailed) as info:
        gh.rest.repos.get("acme", "widgets")
    assert info.value.response.status_code == 401
    assert info.value.response.json()["message"] == "Bad credentials"


def test_token_expires_on_the_sandbox_clock(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    gh.rest.repos.get("acme", "widgets")
    sandbox.state.clock.advance(3601)
    with pytest.raises(RequestFailed) as info:
        gh.rest.repos.get("acme", "widgets")
    assert info.value.response.json()["message"] == "Bad credentials"


def test_unknown_token_and_missing_auth_are_401(sandbox: SandboxServer) -> None:
    unknown = token_client(sandbox.url, "ghs_" + "x" * 100)
    with pytest.raises(RequestFailed) as info:
        unknown.rest.repos.get("acme", "widgets")
    assert info.value.response.json()["message"] == "Bad credentials"
    anonymous = GitHub(base_url=sandbox.url, auto_retry=False, http_cache=False, ssl_verify=False)
    with pytest.raises(RequestFailed) as info:
        anonymous.rest.repos.get("acme", "widgets")
    assert info.value.response.status_code == 401


def test_get_user_is_forbidden_to_installation_tokens_and_answers_pats(
    sandbox: SandboxServer,
) -> None:
    gh = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    with pytest.raises(RequestFailed) as info:
        gh.rest.users.get_authenticated()
    assert info.value.response.status_code == 403
    assert info.value.response.json()["message"] == "Resource not accessible by integration"
    pat = token_client(sandbox.url, sandbox.state.bot_pat)
    bot = pat.rest.users.get_authenticated().parsed_data
    assert bot.login == "swarm-bot"
    assert sandbox.state.bot_pat.startswith(
        "github_pat_"
    ) and sandbox.state.maintainer_pat.startswith("ghp_")


def test_graphql_viewer_names_the_bot_or_the_user(sandbox: SandboxServer) -> None:
    bot = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    assert bot.graphql.request("query { viewer { login } }") == {
        "viewer": {"login": "swarm-reviewer[bot]"}
    }
    triage = token_client(
        sandbox.url,
        mint(
            sandbox.url, sandbox.state, app_id=TRIAGE_APP_ID, installation_id=TRIAGE_INSTALLATION_ID
        ),
    )
    assert triage.graphql.request("{ viewer { login } }")["viewer"]["login"] == "swarm-triage[bot]"
    pat = token_client(sandbox.url, sandbox.state.maintainer_pat)
    assert (
        pat.graphql.request("query Who { viewer { login } }")["viewer"]["login"]
        == "octo-maintainer"
    )
