"""The seeded world: three Apps (reviewer, triager, writer), a maintainer, a bot user, three
repos with realistic PRs."""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from sandbox.github import seed_files as f
from sandbox.github.model import App, Installation, Issue

if TYPE_CHECKING:
    from sandbox.github.state import SandboxState

ORG = "acme"
REVIEWER_APP_ID, REVIEWER_INSTALLATION_ID, REVIEWER_SLUG = 1001, 2001, "swarm-reviewer"
TRIAGE_APP_ID, TRIAGE_INSTALLATION_ID, TRIAGE_SLUG = 1002, 2002, "swarm-triage"
# The writer identity (issue 34): an App of its own, so code it commits and the pull requests it
# opens are never the reviewer's, and GitHub's "an author cannot approve their own pull request"
# holds between them.
WRITER_APP_ID, WRITER_INSTALLATION_ID, WRITER_SLUG = 1003, 2003, "swarm-writer"
REVIEWER_BOT, TRIAGE_BOT = f"{REVIEWER_SLUG}[bot]", f"{TRIAGE_SLUG}[bot]"
WRITER_BOT = f"{WRITER_SLUG}[bot]"
REVIEWER_PERMISSIONS = {
    "pull_requests": "write",
    "issues": "write",
    "contents": "read",
    "metadata": "read",
}
TRIAGE_PERMISSIONS = {"issues": "write", "metadata": "read", "contents": "read"}
# The writer's ceiling (issue 34): its own branch's contents, its pull request, the issue's
# comments; never workflows, administration or secrets.
WRITER_PERMISSIONS = {
    "contents": "write",
    "pull_requests": "write",
    "issues": "write",
    "metadata": "read",
}
# The reviewer's App takes the webhook, set up as docs/events.md says (the triager's has none).
REVIEWER_EVENTS = (
    "issue_comment",
    "issues",
    "pull_request",
    "pull_request_review_comment",
    "pull_request_review_thread",
)
MAINTAINER = "octo-maintainer"
# Collaborators the event tests grant (the seed grants nobody): the maintainer administers,
# alice-dev writes, bob-dev only reads; carol-dev and dave-dev are not collaborators.
WRITER, READER = "alice-dev", "bob-dev"
BOT_USER = "swarm-bot"
BOT_PAT_PERMISSIONS = dict(REVIEWER_PERMISSIONS)
WIDGETS, GADGETS, DOCS = f"{ORG}/widgets", f"{ORG}/gadgets", f"{ORG}/docs"
REPOS = (WIDGETS, GADGETS, DOCS)
COLLABORATORS = {MAINTAINER: "admin", WRITER: "write", READER: "read"}

# Numbers of the seeded PRs and issues (PRs and issues share a repo's number space).
WIDGETS_PR_DEBUG_PRINT = 1  # print( + TODO + code without tests
WIDGETS_PR_PDB = 2  # pdb.set_trace(), tests touched
WIDGETS_PR_CLEAN = 3  # validation + test, nothing to flag
WIDGETS_ISSUE_BUG = 4
WIDGETS_ISSUE_DOCS = 5
GADGETS_PR_LARGE = 1  # 40 files; TODO in plugin_17
GADGETS_PR_CLIENT = 2  # new client: TODO + print(, no tests
GADGETS_ISSUE = 3
DOCS_PR_CLEAN = 1
DOCS_ISSUE = 2

# RSA generation is the slow part of building a state; one key per App per process.
_KEYS: dict[str, RSAPrivateKey] = {}


def app_key(slug: str) -> RSAPrivateKey:
    if slug not in _KEYS:
        _KEYS[slug] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return _KEYS[slug]


def give_contents_write(state: SandboxState, app_id: int = REVIEWER_APP_ID) -> None:
    """The operator adds Contents: write to the App and its installation's owner accepts it:
    what GitHub requires of an App to resolve a review thread (github/gh-aw#35726)."""
    with state.lock:
        state.apps[app_id].permissions["contents"] = "write"
        for inst in state.installations.values():
            if inst.app_id == app_id:
                inst.permissions["contents"] = "write"


def seed_state(state: SandboxState) -> None:
    state.add_user(ORG, type="Organization")
    state.add_user(MAINTAINER, name="Octo Maintainer")
    state.add_user(BOT_USER, name="Swarm Bot")
    # GitHub's account that commits what the web interface and createCommitOnBranch make.
    state.add_user("web-flow", name="GitHub Web Flow")
    for login in ("alice-dev", "bob-dev", "carol-dev", "dave-dev"):
        state.add_user(login)
    for app_id, inst_id, slug, perms, events in (
        (
            REVIEWER_APP_ID,
            REVIEWER_INSTALLATION_ID,
            REVIEWER_SLUG,
            REVIEWER_PERMISSIONS,
            REVIEWER_EVENTS,
        ),
        (TRIAGE_APP_ID, TRIAGE_INSTALLATION_ID, TRIAGE_SLUG, TRIAGE_PERMISSIONS, ()),
        (WRITER_APP_ID, WRITER_INSTALLATION_ID, WRITER_SLUG, WRITER_PERMISSIONS, ()),
    ):
        bot = state.add_user(f"{slug}[bot]", type="Bot")
        state.apps[app_id] = App(
            app_id,
            slug,
            slug.replace("-", " ").title(),
            ORG,
            app_key(slug),
            bot,
            None,
            [*events],
            dict(perms),
        )
        state.installations[inst_id] = Installation(inst_id, app_id, ORG, dict(perms))

    state.add_repo(WIDGETS, f.WIDGETS_FILES, description="Small, sized widgets")
    state.add_repo(GADGETS, f.GADGETS_FILES, description="Gadget registry and client")
    state.add_repo(DOCS, f.DOCS_FILES, description="The acme handbook")
    state.maintainer_pat = state.add_pat(MAINTAINER, scopes=("repo", "workflow", "read:org"))
    state.bot_pat = state.add_pat(
        BOT_USER, fine_grained=True, permissions=dict(BOT_PAT_PERMISSIONS)
    )
    _seed_pulls(state)


@dataclass(frozen=True)
class _Pull:
    title: str
    changes: Mapping[str, str | None]
    body: str
    author: str


@dataclass(frozen=True)
class _Issue:
    title: str
    body: str | None
    author: str
    labels: tuple[str, ...] = ()


def _plugins() -> dict[str, str | None]:
    """Gadgets #1's 40 files: every gadget moved into its own plugin module."""
    large: dict[str, str | None] = {
        f"src/gadgets/plugins/plugin_{i:02d}.py": f.gadget_plugin(i) for i in range(38)
    }
    large["src/gadgets/plugins/__init__.py"] = '"""Gadget plugins register on import."""\n'
    large["src/gadgets/registry.py"] = (
        f.GADGETS_REGISTRY + "\n\ndef names() -> list[str]:\n    return sorted(_REGISTRY)\n"
    )
    return large


def _seeded() -> dict[str, tuple[_Pull | _Issue, ...]]:
    """Each repository's PRs and issues in the order they are opened: they share its number
    space, so this order gives them the numbers named above."""
    return {
        WIDGETS: (
            _Pull(
                "Add widget scaling",
                {"src/widgets/core.py": f.WIDGETS_SCALE},
                "Adds `scale()` so callers can grow widgets proportionally.",
                "alice-dev",
            ),
            _Pull(
                "Make cache size configurable",
                {
                    "src/widgets/cache.py": f.WIDGETS_CACHE_CONFIGURABLE,
                    "tests/test_cache.py": f.WIDGETS_TEST_CACHE_EVICTS,
                },
                "`LRUCache(max_size=...)` instead of the hard-coded 128.",
                "bob-dev",
            ),
            _Pull(
                "Refuse blank widget names",
                {
                    "src/widgets/core.py": f.WIDGETS_CORE_VALIDATED,
                    "tests/test_core.py": f.WIDGETS_TEST_CORE_VALIDATED,
                },
                "Fixes #4.",
                "carol-dev",
            ),
            _Issue(
                "Widget.resize accepts a zero size",
                "`Widget('a').resize(0)` should fail.",
                "dave-dev",
                ("bug",),
            ),
            _Issue("Document the cache size", "How big is the widget cache?", "alice-dev"),
        ),
        GADGETS: (
            _Pull(
                "Split gadgets into plugins",
                _plugins(),
                "Moves every gadget into its own plugin module.",
                "bob-dev",
            ),
            _Pull(
                "Add a fetch client with a timeout",
                {"src/gadgets/client.py": f.GADGETS_CLIENT},
                "First cut of the gadget service client.",
                "alice-dev",
            ),
            _Issue(
                "Registry loses entries on reload",
                "After `importlib.reload` gadgets vanish.",
                "carol-dev",
            ),
        ),
        DOCS: (
            _Pull(
                "Clarify installation steps",
                {"docs/install.md": f.DOCS_INSTALL_CLARIFIED},
                "Mentions virtualenvs.",
                "carol-dev",
            ),
            _Issue("Broken link in the handbook index", None, "dave-dev", ("documentation",)),
        ),
    }


def _seed_pulls(state: SandboxState) -> None:
    for repo, opened in _seeded().items():
        for item in opened:
            if isinstance(item, _Pull):
                state.add_pull(repo, item.title, item.changes, body=item.body, author=item.author)
            else:
                labels = list(item.labels)
                state.add_issue(repo, item.title, item.body, author=item.author, labels=labels)


def push_print_fix(state: SandboxState) -> str:
    """The author's second push to widgets #1: the debug ``print(`` the review flagged is gone
    (the demo's walkthrough: the re-review resolves that thread). The new head SHA, the same on
    every fresh sandbox."""
    pull = state.pull(WIDGETS, WIDGETS_PR_DEBUG_PRINT).pull
    assert pull is not None
    path = "src/widgets/core.py"
    text = state.repo(WIDGETS).commits[pull.head_sha].tree[path]
    assert isinstance(text, str)
    fixed = "".join(line for line in text.splitlines(keepends=True) if "print(" not in line)
    return state.push_commit(WIDGETS, WIDGETS_PR_DEBUG_PRINT, {path: fixed}, "Drop the debug print")


# The writer's walkthrough: a function with a real bug on widgets' default branch, a stdlib
# test for it that the repository's own command runs (the sandbox has no pytest), and the issue
# a user files about it. The test passes before the fix (it never looks at the last widget, as
# the bug's own tests never did), and after it.
WRITER_BUG_PATH = "src/widgets/stats.py"
WRITER_BUG = '''"""Statistics over widgets: their sizes at a glance."""

from __future__ import annotations

from widgets.core import Widget


def largest(widgets: list[Widget]) -> Widget | None:
    """The widget of the largest size (the first of equals); None for no widgets."""
    if not widgets:
        return None
    best = widgets[0]
    for i in range(len(widgets) - 1):
        if widgets[i].size > best.size:
            best = widgets[i]
    return best
'''
WRITER_BUG_TEST = """import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "src"))

from widgets.core import make_widget  # noqa: E402
from widgets.stats import largest  # noqa: E402


class LargestTest(unittest.TestCase):
    def test_no_widgets(self):
        self.assertIsNone(largest([]))

    def test_the_first_of_equals(self):
        a, b = make_widget("a", 2), make_widget("b", 2)
        self.assertIs(largest([a, b, make_widget("c", 1)]), a)
"""
# What the writer must have fixed: the hidden test the walkthrough and the evaluation run
# against the pull request's head, never shown to the model.
WRITER_BUG_HIDDEN_TEST = """
    def test_the_last_widget_counts(self):
        self.assertEqual(largest([make_widget("a", 1), make_widget("b", 5)]).name, "b")
"""
WRITER_TEST_CONFIG = (
    "# swarm's settings for this repository (read from the default branch only)\n"
    "tests:\n"
    '  command: "python3 -m unittest discover -s checks -t . -q"\n'
    "  timeout_seconds: 60\n"
)
WRITER_ISSUE_TITLE = "largest() never returns the last widget"
WRITER_ISSUE_BODY = (
    "`largest([make_widget('a', 1), make_widget('b', 5)])` returns `a`, not `b`: the last "
    "widget is never compared."
)


def plant_writer_issue(state: SandboxState) -> int:
    """Widgets' default branch gets ``largest()`` with its bug, its test and the repository's
    test command; a user files the bug as an issue; the repository's collaborators are set, so
    GitHub can say who may write (who may start the writer with a label). The issue's number."""
    with state.lock:
        state.repo(WIDGETS).collaborators.update(COLLABORATORS)
    state.commit_to_branch(
        WIDGETS,
        {
            WRITER_BUG_PATH: WRITER_BUG,
            "checks/__init__.py": "",
            "checks/test_stats.py": WRITER_BUG_TEST,
            ".github/swarm.yaml": WRITER_TEST_CONFIG,
        },
        message="Add widgets.stats.largest",
    )
    issue = state.add_issue(WIDGETS, WRITER_ISSUE_TITLE, WRITER_ISSUE_BODY, author="dave-dev")
    return issue.number


# The fix rounds' scenarios (issue 35): two functions that build a list from input that may not
# fit. The scripted writer's first fix guards either with a bare ``except:``, which the scripted
# reviewer flags as a major finding (blocking by default). For ``parse_sizes`` the try body shows
# the error to expect (``int(``: ValueError), so the scripted fixer's first round narrows it and
# the re-review is clean; for ``sizes_of`` nothing says which error, so the fixer narrows only to
# ``except Exception:``, which the reviewer flags again, and the rounds run out.
FIX_PATH = "src/widgets/sizes.py"
FIX_MODULE = '''"""Widget sizes read from text and from tables."""

from __future__ import annotations


def parse_sizes(text: str) -> list[int]:
    """Widget sizes from a line like "3,5,8"; an empty line has none."""
    return [int(part) for part in text.split(",")]


def sizes_of(table: dict[str, int], names: list[str]) -> list[int]:
    """The sizes of the named widgets, in order; a name missing from the table has none."""
    return [table[name] for name in names]
'''
FIX_TEST = """import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "src"))

from widgets.sizes import parse_sizes, sizes_of  # noqa: E402


class SizesTest(unittest.TestCase):
    def test_a_line_of_sizes(self):
        self.assertEqual(parse_sizes("3,5"), [3, 5])

    def test_named_sizes(self):
        self.assertEqual(sizes_of({"a": 1, "b": 2}, ["b", "a"]), [2, 1])
"""
FIX_ISSUES = {
    "fixed": (
        "parse_sizes() raises on an empty line",
        "`parse_sizes('')` raises instead of returning no sizes: an empty line has none.",
    ),
    "never_fixed": (
        "sizes_of() raises on a missing name",
        "`sizes_of({'a': 1}, ['a', 'b'])` raises instead of giving no sizes for the table.",
    ),
}


def plant_fix_issue(state: SandboxState, scenario: str, *, config: str = "") -> int:
    """Widgets' default branch gets :data:`FIX_MODULE`, its test and the test command (plus
    ``config``, more of ``.github/swarm.yaml``); a user files the issue of ``scenario``
    (``fixed`` or ``never_fixed``, :data:`FIX_ISSUES`). The issue's number."""
    with state.lock:
        state.repo(WIDGETS).collaborators.update(COLLABORATORS)
    state.commit_to_branch(
        WIDGETS,
        {
            FIX_PATH: FIX_MODULE,
            "checks/__init__.py": "",
            "checks/test_sizes.py": FIX_TEST,
            ".github/swarm.yaml": WRITER_TEST_CONFIG + config,
        },
        message="Add widgets.sizes",
    )
    title, body = FIX_ISSUES[scenario]
    return state.add_issue(WIDGETS, title, body, author="dave-dev").number


def generate_pulls(state: SandboxState, repo: str, n: int, *, seed: int = 0) -> list[Issue]:
    """``n`` small PRs for benchmarks: each adds one module; some carry findings
    (every 3rd a print(, every 5th a TODO, every 7th a pdb.set_trace()), the rest are clean."""
    rng = random.Random(seed)
    package = repo.split("/", 1)[1]
    pulls = []
    for k in range(n):
        serial = f"{seed}_{k:04d}"
        body = [f'"""Generated module {serial}."""\n', f"\ndef value_{k}(x: int) -> int:\n"]
        if k % 3 == 2:
            body.append(f'    print("value_{k}", x)\n')
        if k % 5 == 4:
            body.append("    # TODO: cache this\n")
        if k % 7 == 6:
            body.append("    import pdb; pdb.set_trace()\n")
        body.append(f"    return x * {rng.randint(2, 99)}\n")
        path = f"src/{package}/generated/mod_{serial}.py"
        pulls.append(
            state.add_pull(
                repo,
                f"Add generated module {serial}",
                {path: "".join(body)},
                body=f"Generated PR {serial}.",
                author="dave-dev",
            )
        )
    return pulls


def write_credentials(state: SandboxState, directory: Path, api_url: str) -> Path:
    """``<slug>.pem`` per App, the PATs as ``<login>.token``, and ``sandbox.env``; all 0600."""
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)

    def put(name: str, text: str) -> Path:
        path = directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        return path

    pems = {
        app.slug: put(f"{app.slug}.pem", state.private_key_pem(app.id))
        for app in state.apps.values()
    }
    put(f"{MAINTAINER}.token", state.maintainer_pat + "\n")
    put(f"{BOT_USER}.token", state.bot_pat + "\n")
    lines = [
        f"SWARM_GITHUB_API_URL={api_url}",
        f"SWARM_APP_ID={REVIEWER_APP_ID}",
        f"SWARM_APP_PRIVATE_KEY_FILE={pems[REVIEWER_SLUG]}",
        f"SWARM_APP_INSTALLATION_ID={REVIEWER_INSTALLATION_ID}",
        f"SWARM_MAINTAINER_LOGIN={MAINTAINER}",
        f"SWARM_IDENTITIES__TRIAGE__APP_ID={TRIAGE_APP_ID}",
        f"SWARM_IDENTITIES__TRIAGE__PRIVATE_KEY_FILE={pems[TRIAGE_SLUG]}",
        f"SWARM_IDENTITIES__TRIAGE__INSTALLATION_ID={TRIAGE_INSTALLATION_ID}",
        f"SWARM_IDENTITIES__WRITER__APP_ID={WRITER_APP_ID}",
        f"SWARM_IDENTITIES__WRITER__PRIVATE_KEY_FILE={pems[WRITER_SLUG]}",
        f"SWARM_IDENTITIES__WRITER__INSTALLATION_ID={WRITER_INSTALLATION_ID}",
        # Its own App and the writer's ceiling (contents:write); the others stay reviewers.
        "SWARM_IDENTITIES__WRITER__CEILING=writing",
    ]
    return put("sandbox.env", "\n".join(lines) + "\n")


def credentials_env(state: SandboxState, directory: Path, api_url: str) -> dict[str, str]:
    """:func:`write_credentials`, and the settings it put in ``sandbox.env`` as an environment:
    the one reading of that file for tests and benches (a person's shell sources it)."""
    env_file = write_credentials(state, directory, api_url)
    env: dict[str, str] = {}
    for line in env_file.read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = value
    return env
