"""Planted secrets written through every store API are found nowhere in the database."""

from __future__ import annotations

import base64
from datetime import timedelta

import sqlalchemy as sa

from agents.redact import fingerprint
from agents.store import GitHubCall, NewEvent, NewWorker, Store, WorkerUpdate
from agents.store.base import utcnow
from tests.store.backends import record_llm_call

GH_TOKEN = "ghs_" + "Q7" * 60 + ".abc" * 20
PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjM0NSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
ANTHROPIC = "sk-ant-api03-PLANTEDanthropicKEY0001"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpPLANTEDkeyBODY0001\n-----END RSA PRIVATE KEY-----"
MAGIC = "https://github.test/login/magic?token=PLANTEDmagic0001"
BLOB = base64.b64encode(bytes(range(256))).decode()
PLANTED = {
    GH_TOKEN: "Q7Q7Q7Q7",
    PAT: "11ABCDEFG0123456789",
    JWT: "eyJpc3MiOiIxMjM0NSJ9",
    ANTHROPIC: "PLANTEDanthropicKEY",
    PEM: "MIIEpPLANTEDkeyBODY",
    MAGIC: "PLANTEDmagic0001",
    BLOB: BLOB[20:80],
}
ALL = " ".join(PLANTED)


def _dump_every_value(store: Store) -> str:
    chunks: list[str] = []
    with store._db.read() as conn:
        names = sa.inspect(conn).get_table_names()
        for name in names:
            if name.startswith("transcript_fts"):
                continue  # contentless FTS index: holds tokens only, no readable text
            for row in conn.execute(sa.text(f'SELECT * FROM "{name}"')):
                chunks.extend(str(v) for v in row)
    return "\n".join(chunks)


def test_no_planted_secret_survives_anywhere_in_the_database(store: Store) -> None:
    run_id = store.create_run(f"manual {ALL}", prefect_flow_run_id=GH_TOKEN, totals={"x": ALL})
    worker = store.create_worker(
        NewWorker(
            run_id,
            role_chain=["reviewer", ALL],
            task={"repo": "octo/demo", "headers": {"Authorization": f"token {GH_TOKEN}"}, "n": ALL},
            identity_login=f"bot {PAT}",
            envelope_id="env-1",
            envelope_hash="sha256:" + "ab" * 32,
            token_fingerprint=fingerprint(GH_TOKEN),
            status="running",
        )
    )
    store.update_worker(worker, WorkerUpdate(blocked_reason=ALL, budgets_used={"log": ALL}))
    store.append_events(
        worker,
        [
            NewEvent(kind, {"text": ALL, "output": ALL, "nested": [{"api_key": "k"}]})
            for kind in ("user_turn", "assistant_turn", "tool_call", "tool_result", "error")
        ],
    )
    store.append_event(worker, "status", ALL)
    record_llm_call(
        store,
        worker,
        model=f"m {ANTHROPIC}",
        prefix_hash="sha256:p",
        role_chain=[ALL],
        stop_reason=ALL,
    )
    store.record_prompt_prefix("sha256:p", f"prefix {ALL}")
    store.record_github_call(
        GitHubCall(
            identity="bot[bot]", worker_id=worker, method="POST", route=f"/x?{MAGIC}", target=ALL
        )
    )
    store.record_rate_limit_snapshot(
        identity="bot[bot]",
        resource="core",
        limit=1,
        remaining=0,
        reset_at=utcnow() + timedelta(minutes=1),
        by_worker={worker: ALL},
    )
    store.add_memory("fact", f"remember {ALL}", author=f"alice {GH_TOKEN}")
    store.add_agent_note(worker, f"note {ALL}")
    store.finish_worker(worker, "failed", blocked_reason=ALL)
    store.finish_run(run_id, "failed", totals={"err": ALL})

    dump = _dump_every_value(store)
    assert "octo/demo" in dump and fingerprint(GH_TOKEN) in dump  # the scan sees real rows
    found = [fragment for fragment in PLANTED.values() if fragment in dump]
    assert found == []
