"""Selecting what goes inline: the same finding once (across shards, re-reviews and moved
lines), the repository's threshold and cap, and which earlier threads a push fixed."""

from __future__ import annotations

from agents.posting.findings import Finding
from agents.posting.lines import Moves, line_map
from agents.posting.render import PostedFinding, inline_comment, posted_finding
from agents.posting.selection import Selection, ThreadState, resolvable, select

BOT = "swarm-reviewer[bot]"
OLD, HEAD = "a" * 40, "b" * 40
# Between OLD and HEAD: two lines added at the top of app.py, line 20 rewritten.
MOVES = Moves({"app.py": line_map("@@ -1,1 +1,3 @@\n+x\n+y\n one\n@@ -20,1 +22,1 @@\n-old\n+new")})


def _f(line: int, severity: str = "major", message: str = "Leaks the handle.") -> Finding:
    return Finding.model_validate(
        {
            "path": "app.py",
            "line": line,
            "severity": severity,
            "category": "bug",
            "message": message,
        }
    )


def _posted(finding: Finding, comment_id: int, sha: str = OLD) -> PostedFinding:
    comment = inline_comment(finding, "line", sha)
    raw = {**comment, "id": comment_id, "html_url": f"u/{comment_id}", "user": {"login": BOT}}
    found = posted_finding(raw, BOT)
    assert found is not None
    return found


def _select(findings: list[Finding], **kw: object) -> Selection:
    defaults: dict[str, object] = {
        "place": lambda _f: "line",
        "min_severity": "minor",
        "max_comments": 10,
        "moves_of": lambda _sha: MOVES,
        "head": HEAD,
    }
    defaults.update(kw)
    return select(findings, **defaults)  # type: ignore[arg-type]


def test_a_finding_reported_twice_is_posted_once_whatever_its_punctuation() -> None:
    chosen = _select([_f(5), _f(5, message="leaks the handle"), _f(6)])
    assert [f.line for f, _ in chosen.inline] == [5, 6]


def test_a_finding_on_lines_that_moved_is_not_posted_again() -> None:
    earlier = [_posted(_f(5), 1)]
    chosen = _select([_f(7)], earlier=earlier)  # line 5 moved to 7
    assert chosen.inline == [] and [p.comment_id for _, p in chosen.repeated] == [1]


def test_a_finding_on_code_the_push_rewrote_is_new_code_and_posted() -> None:
    chosen = _select([_f(22)], earlier=[_posted(_f(20), 2)])
    assert len(chosen.inline) == 1 and chosen.repeated == []


def test_a_different_finding_on_the_same_line_is_new() -> None:
    chosen = _select([_f(7, message="Never closed on error.")], earlier=[_posted(_f(5), 1)])
    assert len(chosen.inline) == 1


def test_threshold_then_anchors_then_cap_most_severe_first() -> None:
    findings = [
        _f(1, "nit", "a"),
        _f(2, "minor", "b"),
        _f(3, "major", "c"),
        _f(4, "critical", "d"),
        _f(5, "major", "e"),
        _f(6, "major", "outside"),
    ]
    chosen = _select(
        findings,
        min_severity="major",
        max_comments=2,
        place=lambda f: "outside" if f.message == "outside" else "line",
    )
    assert [f.message for f, _ in chosen.inline] == ["d", "c"]
    assert [f.message for f in chosen.over_cap] == ["e"]
    assert [f.message for f in chosen.outside] == ["outside"]
    assert chosen.below_counts() == {"minor": 1, "nit": 1}


def test_a_fixed_finding_is_resolvable_unless_reported_again_or_reopened() -> None:
    moved, fixed = _posted(_f(5), 1), _posted(_f(20), 2)
    open_threads = {1: ThreadState("T1", False), 2: ThreadState("T2", False)}
    assert resolvable([moved, fixed], open_threads, [], lambda _s: MOVES, HEAD) == [fixed]
    assert resolvable([fixed], open_threads, [_f(22)], lambda _s: MOVES, HEAD) == []
    reopened = {2: ThreadState("T2", False, reopened=True)}
    assert resolvable([fixed], reopened, [], lambda _s: MOVES, HEAD) == []
    done = {2: ThreadState("T2", True)}
    assert resolvable([fixed], done, [], lambda _s: MOVES, HEAD) == []
    # a finding the bot posted at this very head is not "fixed" by it
    assert (
        resolvable(
            [_posted(_f(20), 3, HEAD)], {3: ThreadState("T3", False)}, [], lambda _s: MOVES, HEAD
        )
        == []
    )


def test_a_finding_quoting_a_secret_and_its_redacted_twin_are_one_finding() -> None:
    from agents.posting.findings import Finding
    from agents.posting.selection import unique

    token = "xoxb-2211336677-99887766554-Zq3kLm8NpRt5VwXy"
    raw = Finding(
        path="a.js",
        line=3,
        severity="critical",
        category="security",
        message=f'Hard-coded credential: `const token = "{token}";`',
    )
    quoted = raw.model_copy(
        update={"message": 'Hard-coded credential: `const token = "[REDACTED:secret]";`'}
    )
    assert unique([raw, quoted]) == [raw]
