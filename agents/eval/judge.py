"""The judge: a model decides whether a finding names the problem of a golden comment.

Public code review benchmarks match a tool's comments to human-written golden comments this way,
because a golden comment need not say where (an imported set) and two reviewers word the same
problem differently. The prompt is :data:`PROMPT` (``judge_prompt.md`` beside this module);
every verdict is kept in the evaluation's JSON, with the model's reason, so a person can check
the judge. Only pairs that place could not decide are judged, and only on the same path.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agents.eval.labels import EvalPull, Label
from agents.json_value import JSONObject
from agents.llm.untrusted import wrap_untrusted
from agents.posting.findings import Finding

PROMPT = (Path(__file__).with_name("judge_prompt.md")).read_text(encoding="utf-8")
MAX_TOKENS = 200


class JudgeAnswer(Protocol):
    """What the judge reads of a model's answer (:class:`agents.llm.client.LLMResult` fits)."""

    @property
    def text(self) -> str: ...


class JudgeModel(Protocol):
    """What the judge needs of a model client (:class:`agents.llm.client.LLMClient` fits)."""

    async def create(
        self, request: Mapping[str, object], *, worker_id: str = ...
    ) -> JudgeAnswer: ...


@dataclass(frozen=True)
class Verdict:
    pull: str
    label: int
    finding: int
    same_issue: bool | None  # None: the judge's answer could not be read
    reason: str

    def as_record(self) -> JSONObject:
        return dataclasses.asdict(self)


def candidates(
    pull: EvalPull, findings: Sequence[Finding], placed: set[tuple[int, int]]
) -> list[tuple[int, int]]:
    """(finding, label) pairs worth a verdict: same path (or a label without one), not already
    matched by place."""
    return [
        (f, n)
        for f, finding in enumerate(findings)
        for n, label in enumerate(pull.findings)
        if (f, n) not in placed and (label.path is None or label.path == finding.path)
    ]


def request(model: str, pull: EvalPull, finding: Finding, label: Label) -> JSONObject:
    where = f"{finding.path}:{finding.first_line}-{finding.line}"
    golden = label.comment if label.path is None else f"{label.path}: {label.comment}"
    text = "\n\n".join(
        [
            "<task>swarm-eval-judge: does the finding name the golden comment's problem?</task>",
            f"Pull request: {pull.title}",
            "Golden comment:\n" + wrap_untrusted("golden_comment", golden),
            f"Finding at {where} ({finding.category}, {finding.severity}):\n"
            + wrap_untrusted("finding", finding.message),
        ]
    )
    return {
        "model": model,
        "max_tokens": MAX_TOKENS,
        "system": PROMPT,
        "messages": [{"role": "user", "content": text}],
    }


def read_verdict(text: str) -> tuple[bool | None, str]:
    start, end = text.find("{"), text.rfind("}")
    try:
        answer = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or not isinstance(answer.get("same_issue"), bool):
        return None, f"unreadable answer: {text[:200]!r}"
    return answer["same_issue"], str(answer.get("reason", ""))[:500]


async def judge(
    client: JudgeModel,
    model: str,
    pull: EvalPull,
    findings: Sequence[Finding],
    pairs: Sequence[tuple[int, int]],
) -> list[Verdict]:
    verdicts = []
    for f, n in pairs:
        result = await client.create(
            request(model, pull, findings[f], pull.findings[n]), worker_id="eval-judge"
        )
        same, reason = read_verdict(result.text)
        verdicts.append(Verdict(pull.id, n, f, same, reason))
    return verdicts
