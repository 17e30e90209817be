"""The ``swarm-run`` Prefect flow and its tasks: the only folder that defines flows and tasks.

- ``flow.py``: the flow: discover -> plan -> dispatch -> fan out -> summarize -> publish
- ``request.py``: ``RunRequest``, the flow's one parameter: what a run is asked to do
- ``discovery.py``: discovery as the flow runs it, owner by owner, as the role's bot
- ``fanout.py``: workers as Prefect task runs under the concurrency cap
- ``gate.py``: plan approval: the plan posted, the run suspended for a maintainer's decision
- ``notes.py``: the run's notes on PRs that end without a full review, posted as the role's bot
- ``tokens.py``: one token per scope across the workers of a run that follow each other
- ``states.py``: a worker's outcome as the task-run state the UI shows, and back
- ``pages.py``: the UI's markdown and table artifacts per worker and identity
- ``report.py``: a run's result as plain data, for the flow's return and the CLI
- ``spend.py``: a run's cost estimate and cap at the flow's level
- ``events.py``: Prefect events that Automations can notify on
- ``children.py``: a child flow run per repository, through the deployment
- ``deployed.py``: what a run on a work pool does that a local run does not
- ``serve.py``: ``swarm serve``: the flow as a scheduled deployment
- ``bot.py``: the bot's own calls outside a worker: permissions, reactions, replies
- ``adapters.py``: the flow's adapters to the runtime: discovery reads, the ledger, the store
- ``logs.py``: the project's loggers into Prefect's run logs, through redaction
- ``models.py``: which model client a run talks to: Anthropic or the scripted model
"""
