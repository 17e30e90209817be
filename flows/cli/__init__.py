"""The ``swarm`` commands, one small module per topic.

Each module defines ``commands``, a :class:`typer.Typer`: without a name its commands join the
top level (``swarm run``), with a name they form a group (``swarm memory list``). To add commands,
write a module here and add its name to :data:`flows.cli.app.COMMAND_MODULES`. Command bodies
import what they need inside the function so ``swarm --help`` stays fast, and raise
:class:`agents.settings.model.ConfigError` (or any error :mod:`flows.cli.errors` knows) for
mistakes a person can fix: the CLI turns those into one line and exit status 2.

- ``app.py``: The ``swarm`` command line: the top-level app and the list of command modules
- ``app_actions.py``: What ``swarm app create`` does: plan the Apps, serve the manifest page, keep
  what GitHub hands back, check the result
- ``app_manifest.py``: What a GitHub App made for the swarm asks GitHub for: one per identity,
  its roles' permissions, the events acted on
- ``config.py``: ``swarm config check PATH``: validate a repository's ``.github/swarm.yaml`` locally
- ``console.py``: Rich rendering for the CLI: the run summary table and small helpers
- ``demo.py``: ``swarm demo``: one swarm over the offline sandbox, the embedded default
- ``errors.py``: What a person sees when a command fails: one or two lines, the right exit status,
  no secret
- ``eval.py``: ``swarm eval``, ``swarm eval compare``: review quality on a labelled set
- ``evaluation.py``: the body of ``swarm eval``: the set served, reviewed, read back, scored
- ``evaluation_implement.py``: the body of ``swarm eval --kind implement``: issues implemented,
  each pull request's head judged by hidden tests in the sandbox
- ``exec_env.py``: What a program launched by ``swarm exec`` gets: an environment built from an
  allow-list
- ``github_app.py``: ``swarm app create``: the swarm's GitHub Apps made with GitHub's App manifest
  flow
- ``history.py``: ``swarm runs``, ``deliveries``, ``transcript``, ``limits`` and ``audit``: what the
  swarm did, from the store
- ``identities.py``: ``swarm verify`` and ``swarm exec``: the configured identities, checked and
  lent
- ``identity_actions.py``: ``swarm verify`` and ``swarm exec``: identities checked and lent, never
  shown
- ``identity_blocks.py``: ``swarm verify``'s block per identity: its ceiling, grant and
  repositories, and the refusal of a writer App granted more than its ceiling
- ``known.py``: What a name typed on the command line is checked against: roles on disk, and
  repositories and identities configured or recorded
- ``memory.py``: ``swarm memory list|add|edit|rm``: the memories workers see, with their provenance
- ``memory_actions.py``: ``swarm memory list|add|edit|rm``: user-visible memory, with errors that
  name the flag
- ``memory_review.py``: ``swarm memory review``: proposed learnings listed with their links,
  accepted or rejected by a person
- ``memory_views.py``: ``swarm memory show|notes|continuity``: memories, agent notes and continuity
  with their provenance
- ``options.py``: Options shared by several commands, so each reads and behaves the same everywhere
- ``preflight.py``: What a command needs before it starts, checked at once and before Prefect spends
  seconds
- ``retry.py``: ``swarm run --retry RUN``: what a run left failed, asked for again as a new run
- ``role_actions.py``: ``swarm roles check``: role files validated, and their identities resolved
  when configured
- ``roles.py``: ``swarm roles check``: every role file validated, with what each role may do
- ``run.py``: ``swarm demo``, ``swarm run`` and ``swarm serve``: a swarm over pull requests, now or
  on cron
- ``runner.py``: Running the ``swarm-run`` flow once from the command line and printing what it did
- ``sandbox.py``: ``swarm sandbox serve``: the offline GitHub stand-in, in the foreground
- ``server.py``: ``swarm server start|stop|status``: the local Prefect server runs and the UI share
- ``server_actions.py``: What ``swarm server start|stop|status`` do and print
- ``store.py``: ``swarm store prune|copy``: upkeep of the shared store, and moving it
- ``store_actions.py``: Read-back and upkeep commands over the shared store: runs, transcripts,
  limits, audit, prune
- ``webhook.py``: ``swarm webhook serve``: react to GitHub events instead of polling
"""
