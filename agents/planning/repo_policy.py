"""What a repository's ``.github/swarm.yaml`` means for one pull request: skip it, or which of
its files to review and which repository guidance comes along."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agents.planning.globs import matches
from agents.planning.repo_config import RepoConfig

GUIDANCE_CHARS = 6000

PolicySkip = Literal[
    "role_disabled",
    "author_skipped",
    "label_skipped",
    "draft",
    "no_reviewable_files",
    "too_many_files",
]


@dataclass(frozen=True)
class Scope:
    """The files a review covers and those the configuration leaves out."""

    kept: tuple[str, ...]
    excluded: tuple[str, ...]


def review_scope(config: RepoConfig, files: Sequence[str]) -> Scope:
    rules = config.paths
    kept = [f for f in files if matches(f, rules.include) and not matches(f, rules.excluded)]
    chosen = set(kept)
    return Scope(tuple(kept), tuple(f for f in files if f not in chosen))


def skip_rule(
    config: RepoConfig,
    *,
    role: str,
    author: str | None,
    labels: Sequence[str],
    draft: bool,
) -> tuple[PolicySkip, str] | None:
    """(reason, detail) when the configuration says to leave this PR alone, else None."""
    if config.roles is not None and role not in config.roles:
        return "role_disabled", f"role {role!r} is not in the repository's roles"
    wanted = {a.lower() for a in config.skip.authors}
    if author and author.lower() in wanted:
        return "author_skipped", f"author {author} is in skip.authors"
    skipped_labels = {lbl.lower() for lbl in config.skip.labels}
    for label in labels:
        if label.lower() in skipped_labels:
            return "label_skipped", f"label {label!r} is in skip.labels"
    if draft and config.skip.drafts:
        return "draft", "drafts are skipped (skip.drafts)"
    return None


def scope_problem(config: RepoConfig, scope: Scope) -> tuple[PolicySkip, str] | None:
    """(reason, detail) when nothing is left to review or too much is."""
    if not scope.kept:
        shown = ", ".join(scope.excluded[:3]) + (" ..." if len(scope.excluded) > 3 else "")
        return (
            "no_reviewable_files",
            f"all {len(scope.excluded)} changed file(s) excluded by paths ({shown})",
        )
    if config.max_files is not None and len(scope.kept) > config.max_files:
        count, most = len(scope.kept), config.max_files
        return "too_many_files", f"{count} files to review, max_files is {most}"
    return None


def guidance_for(config: RepoConfig, files: Sequence[str]) -> str:
    """The instructions whose paths match any of ``files``, in file order, bounded."""
    texts = [
        rule.text.strip()
        for rule in config.instructions
        if any(matches(f, rule.paths) for f in files)
    ]
    return "\n\n".join(texts)[:GUIDANCE_CHARS]
