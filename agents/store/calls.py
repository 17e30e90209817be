"""Hidden runtime records of outside calls: LLM usage, prompt prefixes, GitHub calls with the
audit log of mutations, and rate-limit snapshots."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import sqlalchemy as sa

from agents.store.base import StoreBase, clean, clean_json, utcnow
from agents.store.records import (
    AuditRecord,
    GitHubCall,
    LlmCall,
    LlmCallRecord,
    RateLimitRecord,
)
from agents.store.schema import (
    audit_log,
    github_calls,
    llm_calls,
    prompt_prefixes,
    rate_limit_snapshots,
)

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class CallsMixin(StoreBase):
    def record_llm_call(self, call: LlmCall) -> None:
        cache_miss = call.cache_miss
        if cache_miss is None:
            cache_miss = call.prefix_hash is not None and call.cache_read_tokens == 0
        self._insert(
            llm_calls,
            {
                "worker_id": call.worker_id,
                "model": clean(call.model),
                "prefix_hash": clean(call.prefix_hash),
                "role_chain": clean_json(list(call.role_chain)),
                "input_tokens": call.input_tokens,
                "cache_read_tokens": call.cache_read_tokens,
                "cache_write_tokens": call.cache_write_tokens,
                "output_tokens": call.output_tokens,
                "cost": call.cost,
                "latency_ms": call.latency_ms,
                "stop_reason": clean(call.stop_reason),
                "cache_miss": cache_miss,
                "at": utcnow(),
                "memory_hash": clean(call.memory_hash),
            },
        )

    def list_llm_calls(self, worker_id: str) -> list[LlmCallRecord]:
        query = (
            sa.select(llm_calls).where(llm_calls.c.worker_id == worker_id).order_by(llm_calls.c.id)
        )
        return self._all(LlmCallRecord, query)

    def record_prompt_prefix(self, prefix_hash: str, body: str) -> bool:
        """Store a prefix body once per hash (redacted). True when it was new."""
        try:
            with self._db.write() as conn:
                exists = conn.execute(
                    sa.select(prompt_prefixes.c.hash).where(prompt_prefixes.c.hash == prefix_hash)
                ).first()
                if exists is not None:
                    return False
                conn.execute(
                    sa.insert(prompt_prefixes).values(
                        hash=clean(prefix_hash), body=clean(body), created_at=utcnow()
                    )
                )
        except sa.exc.IntegrityError:
            return False  # another worker stored the same prefix a moment ago
        return True

    def get_prompt_prefix(self, prefix_hash: str) -> str | None:
        with self._db.read() as conn:
            return conn.execute(
                sa.select(prompt_prefixes.c.body).where(prompt_prefixes.c.hash == prefix_hash)
            ).scalar_one_or_none()

    def record_github_call(self, call: GitHubCall) -> None:
        """Log one GitHub call; a mutation also lands in the audit log."""
        method = call.method.upper()
        mutation = call.mutation if call.mutation is not None else method in MUTATING_METHODS
        common = {
            "identity": clean(call.identity),
            "worker_id": call.worker_id,
            "method": method,
            "route": clean(call.route),
            "target": clean(call.target),
            "status": call.status,
            "ratelimit_remaining": call.ratelimit_remaining,
            "at": utcnow(),
        }
        with self._db.write() as conn:
            conn.execute(
                sa.insert(github_calls).values(
                    **common, resource=call.resource, latency_ms=call.latency_ms
                )
            )
            if mutation:
                conn.execute(sa.insert(audit_log).values(**common))

    def audit(
        self, identity: str | None = None, since: datetime | None = None, limit: int = 1000
    ) -> list[AuditRecord]:
        query = sa.select(audit_log).order_by(audit_log.c.at, audit_log.c.id).limit(limit)
        if identity is not None:
            query = query.where(audit_log.c.identity == identity)
        if since is not None:
            query = query.where(audit_log.c.at >= since)
        return self._all(AuditRecord, query)

    def count_github_calls(self, identity: str | None = None) -> int:
        query = sa.select(sa.func.count()).select_from(github_calls)
        if identity is not None:
            query = query.where(github_calls.c.identity == identity)
        with self._db.read() as conn:
            return int(conn.execute(query).scalar_one())

    def record_rate_limit_snapshot(
        self,
        *,
        identity: str,
        resource: str,
        limit: int | None,
        remaining: int | None,
        reset_at: datetime | None,
        paused_until: datetime | None = None,
        by_worker: Mapping[str, object] | None = None,
    ) -> None:
        self._insert(
            rate_limit_snapshots,
            {
                "identity": clean(identity),
                "resource": clean(resource),
                "limit": limit,
                "remaining": remaining,
                "reset_at": reset_at,
                "paused_until": paused_until,
                "by_worker": clean_json(dict(by_worker or {})),
                "at": utcnow(),
            },
        )

    def rate_limit_history(
        self, identity: str, resource: str | None = None
    ) -> list[RateLimitRecord]:
        t = rate_limit_snapshots
        query = sa.select(t).where(t.c.identity == identity).order_by(t.c.at, t.c.id)
        if resource is not None:
            query = query.where(t.c.resource == resource)
        return self._all(RateLimitRecord, query)

    def latest_rate_limits(self) -> list[RateLimitRecord]:
        """The newest snapshot of every identity's every resource (``swarm limits``)."""
        t = rate_limit_snapshots
        newest = (
            sa.select(sa.func.max(t.c.id).label("id")).group_by(t.c.identity, t.c.resource)
        ).subquery()
        query = sa.select(t).join(newest, t.c.id == newest.c.id)
        return self._all(RateLimitRecord, query.order_by(t.c.identity, t.c.resource))
