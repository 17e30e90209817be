"""An offline stand-in for the parts of GitHub's REST and GraphQL APIs swarm uses.

- ``__main__.py``: ``python -m sandbox.github``: the sandbox GitHub in the foreground
- ``app.py``: The FastAPI application over a SandboxState
- ``auth.py``: Who is calling: an App (JWT), an installation token, or a user's personal access
  token
- ``conditional.py``: Conditional requests as GitHub answers them: ETags specific to the credential,
  a 304 without a body that costs no primary point
- ``clock.py``: A clock for the sandbox that can run faster than real time or be moved by hand
- ``diffs.py``: Unified-diff patches as GitHub serves them, and where a review comment may land
- ``errors.py``: The error a handler raises to answer like GitHub does
- ``feedback.py``: What people do with the bot's review comments, as GitHub serves it: replies
  (review comments with ``in_reply_to_id``), reactions, resolved threads, and each person's
  permission on a repository
- ``gate.py``: The wrapper every route runs through: auth, failure injection, rate limits, repo
  visibility, permissions, rate-limit headers and the request log
- ``graphql.py``: A small GraphQL stand-in: the handful of operations the product sends, found by
  scanning the top-level fields of the operation; anything else is a GraphQL error, as GitHub
  answers
- ``graphql_commits.py``: ``createCommitOnBranch``: the one way a worker commits, signed by
  GitHub
- ``graphql_parse.py``: Just enough GraphQL reading for the sandbox: top-level fields, selections,
  input literals
- ``graphql_pulls.py``: Discovery's GraphQL listing: ``repository { defaultBranchRef object
  pullRequests }``
- ``graphql_threads.py``: Review threads over GraphQL, the only place GitHub says whether a thread
  is resolved and by whom: ``pullRequest.reviewThreads`` and the ``resolveReviewThread`` /
  ``unresolveReviewThread`` mutations people (and Apps with pull request write access) send
- ``hook_log.py``: An App's webhook deliveries as GitHub keeps them: every attempt, its answer, and
  redeliveries
- ``limits.py``: Per-identity rate limits: primary buckets per resource and GitHub's secondary
  limits
- ``manifests.py``: GitHub's App manifest flow, as github.com runs it: the new-App and install
  pages, the code's conversion
- ``model.py``: The nouns the sandbox GitHub keeps: apps, users, tokens, repos, commits, PRs, issues
- ``paging.py``: per_page/page slicing with GitHub's Link header
- ``records.py``: Test knobs, failure rules and the request log kept by SandboxState
- ``render.py``: JSON bodies shaped like GitHub's, complete enough for githubkit's models to parse
- ``render_pulls.py``: JSON bodies for pull requests, reviews, commits and issues (see render.py for
  the rest)
- ``releases.py``: Real pull requests nobody here wrote: two adjacent releases of a well-known
  package from PyPI (cached), as base and head of one PR
- ``routes_app.py``: App, installation, token, user and rate-limit endpoints
- ``routes_feedback.py``: Repository review comments with replies, reactions and collaborator
  permission endpoints
- ``routes_git.py``: What a worker that writes code calls: branches (git refs), a commit's page
  with its signature, the repository's tarball, and opening a pull request
- ``routes_hooks.py``: An App's webhook deliveries: list them, read one, ask for one again (App
  JWT only)
- ``routes_issues.py``: Issue, issue comment and label endpoints
- ``routes_people.py``: Who may do what in a repository (collaborator permission), and reactions to
  conversation comments
- ``routes_pulls.py``: Repository, pull request, contents and compare endpoints
- ``seed.py``: The seeded world: two Apps, a maintainer, a bot user, three repos with realistic PRs
- ``seed_files.py``: File contents of the seeded repositories and of the seeded pull requests'
  changes
- ``seed_large.py``: Pull requests too large for one small window: a 300-file PR and a 5,000-line
  file (context tests and bench)
- ``state.py``: Everything the sandbox GitHub knows, behind one lock, plus the knobs tests turn
- ``tokens.py``: Installation token minting: down-scoping, refusals worded like GitHub, token shapes
- ``web.py``: The web pages behind the ``html_url`` links the sandbox hands out
- ``webhooks.py``: Signed webhook deliveries of what happens in the sandbox, shaped as GitHub sends
  them
"""

from sandbox.github.clock import SandboxClock
from sandbox.github.limits import RateLimits
from sandbox.github.state import Knobs, RecordedRequest, SandboxState

__all__ = ["Knobs", "RateLimits", "RecordedRequest", "SandboxClock", "SandboxState"]
