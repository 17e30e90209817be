"""Planning: which pull requests and issues to work on, in which shards, at what cost.

Plain Python, no Prefect: each kind of work (:mod:`agents.kinds`) finds its items through it.

- ``discover.py``: work discovery: open PRs per repository, minus the ones already reviewed
- ``sources.py``: discovery's GitHub reads as the role's bot, its ledger, the feedback read first
- ``files.py``: a PR's changed files as planning sees them: their size, and which are listed only
- ``shards.py``: one worker per PR, or reviewer shards cut by size plus a summarizer
- ``replies.py``: which replies in the bot's own review threads are still to be answered
- ``triage.py``: which open issues the triage kind's role still has to triage
- ``costs.py``: a run's expected cost before it starts and its cost cap while it runs
- ``repo_config.py``: ``.github/swarm.yaml``: what one repository asks of the swarm, strict schema,
  and its one reader at a ref
- ``repo_policy.py``: what that file means for one PR: skip it, which files, which guidance
- ``globs.py``: ``.gitignore``-style path globs for ``.github/swarm.yaml``
- ``config_notice.py``: telling a PR, once, that its repository's ``.github/swarm.yaml`` is invalid
"""
