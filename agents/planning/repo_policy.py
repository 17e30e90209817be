"""What a repository's ``.github/swarm.yaml`` means for one pull request: skip it, whether what is
left to review is too little or too much, and which repository guidance comes along (which files
are read in full is :mod:`agents.planning.files`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from agents.planning.files import Split
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


def scope_problem(config: RepoConfig, split: Split) -> tuple[PolicySkip, str] | None:
    """(reason, detail) when nothing is left to read in full or too much is: such a PR gets a
    note saying so, never silence (its files were chosen by its author)."""
    if not split.read:
        shown = ", ".join(f.path for f in split.listed[:3]) + (
            " ..." if len(split.listed) > 3 else ""
        )
        return (
            "no_reviewable_files",
            f"all {len(split.listed)} changed file(s) are listed only ({shown})",
        )
    if config.max_files is not None and len(split.read) > config.max_files:
        count, most = len(split.read), config.max_files
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
