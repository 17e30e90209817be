"""The worker: open the envelope, verify the identity, run the session loop, report an outcome.

``run`` drives one worker end to end over the narrow ``deps.WorkerDeps``; ``loop`` is the
session itself over three ports (``ports``); ``budget``, ``prompt`` and ``record`` hold the
rest. Import from the modules: this package stays empty so that importing the dependencies'
shape (``deps``) does not load the SDKs ``run`` needs.

- ``briefing.py``: The first user turn's briefing: accepted learnings of the repository, quoted
  inside untrusted delimiters
- ``budget.py``: A worker's budgets and what it has spent against them (turns, tokens, cost, GitHub
  calls, wall time)
- ``deps.py``: What one worker is given: narrow parts, composed once per process by
  ``agents.wiring``
- ``loop.py``: The session loop: ask the model, run the tools it asks for, repeat until it is done
- ``outline.py``: The whole pull request in outline (title, body, every file with its status,
  counts, test mark and reader) for every review worker's first turn
- ``overlays.py``: Call overlays from configuration: a role laid over exactly the calls that look at
  some paths
- ``ports.py``: What the worker loop talks to, as three small ports: the model, the tools, the
  recorder
- ``prompt.py``: What the worker tells the model: the trusted task line, and the session's cached
  prefix (role identity, tools, frozen memory, skills, timestamp), with the repository's guidance
  files from the base commit as data beside it
- ``record.py``: One worker's record in the store: its row, its transcript, its LLM and GitHub calls
- ``run.py``: One worker, start to end: open the envelope -> verify the identity -> register -> the
  loop -> outcome
- ``session_memory.py``: What a worker's session starts from: the previous continuity note, the
  frozen memory snapshot, accepted learnings, read off the loop
- ``story.py``: A worker's story in a few readable log lines: who it proved to be, what it read,
  each model call, each goal, checkpoint and decision, what it posted, and how it ended
- ``window.py``: One session's context window: every request estimated and held to the budget, older
  results stubbed behind a cache breakpoint
"""
