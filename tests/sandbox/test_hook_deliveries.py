"""The App's webhook delivery log as GitHub keeps and serves it ("REST API endpoints for GitHub App
webhooks"): each attempt with its status, newest first with cursor paging, one delivery with its
request, a redelivery asked for (202) and made later under the same guid; App JWT only. Read
with githubkit, whose models are GitHub's schema."""

from __future__ import annotations

import pytest
from githubkit.exception import RequestFailed

from sandbox.github.seed import MAINTAINER, REVIEWER_APP_ID, TRIAGE_APP_ID, WIDGETS
from sandbox.github.webhooks import SandboxWebhooks
from sandbox.server import SandboxServer
from tests.ports import closed_port
from tests.sandbox.clients import app_client, token_client

SECRET = "whsec-sandbox-log-0123456789"


def _failed_while_down(sandbox: SandboxServer, n: int) -> SandboxWebhooks:
    hooks = SandboxWebhooks(sandbox.state, SECRET, api_url=sandbox.url)
    for i in range(n):
        sandbox.state.add_comment(WIDGETS, 3, f"Note {i}", author=MAINTAINER)
    url = f"http://127.0.0.1:{closed_port()}/github/webhook"
    assert hooks.post_pending(url, timeout=2.0) == [None] * n
    return hooks


def test_a_delivery_to_a_receiver_that_is_down_is_logged_failed_and_listed_newest_first(
    sandbox: SandboxServer,
) -> None:
    hooks = _failed_while_down(sandbox, 3)
    gh = app_client(sandbox.url, sandbox.state)

    items = gh.rest.apps.list_webhook_deliveries(per_page=2).parsed_data
    first = gh.rest.apps.list_webhook_deliveries(per_page=2)
    link = first.headers["link"]
    assert 'rel="next"' in link and "cursor=" in link
    cursor = link.split("cursor=", 1)[1].split(">", 1)[0].split("&", 1)[0]
    rest = gh.rest.apps.list_webhook_deliveries(per_page=2, cursor=cursor)

    listed = items + rest.parsed_data
    assert [i.id for i in listed] == sorted((i.id for i in listed), reverse=True)
    assert "link" not in rest.headers
    assert {(i.status_code, i.redelivery, i.event, i.action) for i in listed} == {
        (0, False, "issue_comment", "created")
    }
    assert all(i.status != "OK" for i in listed)
    assert sorted(i.guid for i in listed) == sorted(a.guid for a in sandbox.state.hook_log.attempts)
    hooks.close()


def test_a_redelivery_asked_for_is_made_later_under_the_same_guid_flagged_redelivery(
    sandbox: SandboxServer,
) -> None:
    hooks = _failed_while_down(sandbox, 1)
    gh = app_client(sandbox.url, sandbox.state)
    [item] = gh.rest.apps.list_webhook_deliveries().parsed_data
    one = gh.rest.apps.get_webhook_delivery(item.id).parsed_data
    assert one.guid == item.guid and one.request.headers is not None
    assert one.request.headers.model_dump()["X-GitHub-Delivery"] == item.guid

    asked = gh.rest.apps.redeliver_webhook_delivery(item.id)

    assert asked.status_code == 202
    [again] = hooks.take()
    assert (again.delivery_id, again.redelivery) == (item.guid, True)
    assert again.headers["X-GitHub-Delivery"] == item.guid
    hooks.close()


def test_the_log_is_the_apps_own_and_needs_its_jwt(sandbox: SandboxServer) -> None:
    hooks = _failed_while_down(sandbox, 1)
    reviewer = app_client(sandbox.url, sandbox.state)
    [item] = reviewer.rest.apps.list_webhook_deliveries().parsed_data
    # Another App sees none of it.
    triage = app_client(sandbox.url, sandbox.state, TRIAGE_APP_ID)
    assert triage.rest.apps.list_webhook_deliveries().parsed_data == []
    with pytest.raises(RequestFailed) as other:
        triage.rest.apps.redeliver_webhook_delivery(item.id)
    assert other.value.response.status_code == 404
    # An installation token is not the App.
    token = sandbox.state.mint_token(
        next(i for i in sandbox.state.installations.values() if i.app_id == REVIEWER_APP_ID).id
    )
    installation = token_client(sandbox.url, token)
    with pytest.raises(RequestFailed) as refused:
        installation.rest.apps.list_webhook_deliveries()
    assert refused.value.response.status_code == 401
    hooks.close()
