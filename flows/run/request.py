"""What one ``swarm-run`` flow run is asked to do: :class:`RunRequest`, its only parameter.

Every way a run starts builds one: ``swarm run`` and the demo (:mod:`flows.cli.runner`), the
webhook receiver (:mod:`flows.webhook.sink`), ``swarm serve``'s deployment (:mod:`flows.run.serve`),
a parent run's children (:mod:`flows.run.children`), and ``prefect.yaml``'s deployments, whose
``parameters`` are ``request: {...}``. Prefect validates the parameter against this model, shows
each field with its description in the UI's run form, and stores it with the flow run: it is plain
data and nothing secret (settings and keys are read from each run's own environment).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agents.work import parse_target


class RunRequest(BaseModel):
    """One run: which repositories or pull requests, as which role, within which limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repos: tuple[str, ...] | None = Field(
        None, description="OWNER/NAME repositories; default: SWARM_REPOS of the machine running it"
    )
    role: str = Field("reviewer", description="The role of the workers (a file in roles/)")
    max_workers: int | None = Field(None, description="Workers at once; default: SWARM_MAX_WORKERS")
    dry_run: bool = Field(False, description="Post nothing; the summary shows what would be posted")
    model: str | None = Field(None, description="Model id, or 'scripted'; default: SWARM_MODEL")
    shard_threshold_files: int = Field(
        100,
        description="A PR with more changed files than this is reviewed in shards (a PR with "
        "more to read than one reviewer can is sharded whatever its count: shards are cut by "
        "the size of the patches)",
    )
    shard_size: int = Field(100, description="At most this many changed files per shard")
    summarizer_role: str | None = Field(
        None,
        description="The role that merges a sharded PR's reviews into one; default: the role "
        "of the summarize kind",
    )
    fan_out: bool = Field(
        True,
        description="From a deployment over several repositories: one child run per repository",
    )
    max_cost: float | None = Field(
        None,
        description="USD: no worker starts once spend plus what running workers hold passes it",
    )
    overlay: str | None = Field(
        None, description="A role whose prompt lies over the workers' sessions (session overlay)"
    )
    targets: tuple[str, ...] | None = Field(
        None, description="Only these OWNER/NAME#N pull requests (issues for the triager)"
    )
    force: bool = Field(
        False, description="With targets: review even at an already reviewed head (a re-review)"
    )
    rerun_id: str | None = Field(
        None, description="What keys a forced re-review (default: the flow run's id)"
    )
    ack_comment: int | None = Field(
        None, description="The /swarm command comment that asked; it gets a reaction at the end"
    )
    focus: str | None = Field(
        None, description="A role whose focus lies over every call of the workers (call overlay)"
    )
    retry_of: str | None = Field(
        None, description="The run whose failed workers this run does again (swarm run --retry)"
    )

    # What a run keeps of its request in the store, so `swarm run --retry` can ask the same of
    # the work it failed at (the targets come from its failed workers).
    KEPT: ClassVar[frozenset[str]] = frozenset({"role", "overlay", "focus", "dry_run", "retry_of"})

    def kept(self) -> dict[str, Any]:
        """The fields of :data:`KEPT` this request was given: plain data, nothing secret."""
        return self.model_dump(mode="json", include=set(self.KEPT), exclude_defaults=True) | {
            "role": self.role
        }

    def pull_requests(self) -> list[tuple[str, int]]:
        """``targets`` as (repo, number); a malformed one is a :class:`ConfigError`."""
        from agents.settings.model import ConfigError

        try:
            return [parse_target(t) for t in self.targets or ()]
        except ValueError as exc:
            raise ConfigError(f"targets: {exc}") from None

    def for_child(self, repo: str, children: int) -> RunRequest:
        """This request for one of ``children`` repositories: a child never fans out again, and
        a cost cap is shared out equally so the children together stay under it."""
        share = self.max_cost / max(children, 1) if self.max_cost is not None else None
        return self.model_copy(update={"repos": (repo,), "fan_out": False, "max_cost": share})

    def over(self, base: RunRequest) -> RunRequest:
        """The fields this request was given, over ``base`` (a deployment's own request):
        Prefect merges a run's parameters over its deployment's one level deep, which for a
        single ``request`` parameter would drop every field of the deployment's."""
        return base.model_copy(update=self.model_dump(exclude_unset=True))

    def parameters(self) -> dict[str, Any]:
        """The flow run's parameters as Prefect's API takes them for a deployment's run: only
        what differs from the defaults, so the deployment and the run show what was asked. (A
        run called in process, as ``swarm run`` calls it, stores every field.)"""
        return {"request": self.model_dump(mode="json", exclude_defaults=True)}

    @classmethod
    def of_parameters(cls, parameters: dict[str, Any] | None) -> RunRequest:
        """The request in a flow run's parameters (a model in this process, a dict from the
        API); the defaults when there is none."""
        return cls.model_validate((parameters or {}).get("request") or {})
