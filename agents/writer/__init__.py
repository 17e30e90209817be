"""The writer: what an implement worker works on and what it leaves, set up and written by code.

The model reads and edits a throwaway copy through tools and says what it did; code fetches the
copy, runs the repository's tests in the sandbox, commits through ``createCommitOnBranch`` and
opens the one draft pull request, so the model never holds a token and never picks a branch.

- ``bench.py``: The writer's bench: the base and its settings, the writer's branch, the working copy
- ``suite.py``: The repository's test command, run in the sandbox on the working copy, or why not
- ``body.py``: The draft pull request's body: the plan, what changed, the tests and what they cost
- ``rounds.py``: Where a writer pull request's fix rounds stand: blocking findings, people's words
- ``fixing.py``: A fix round's bench: the writer's own pull request at the reviewed head
- ``approval.py``: Plan approval: which items wait, the gate's row and attempts, its comments posted
  once, what a planning session is told, what becomes of an expired wait
"""
