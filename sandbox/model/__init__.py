"""The scripted model: an offline, deterministic stand-in for the Anthropic Messages API.

- ``answer.py``: The scripted responder: read the thread it was asked about, answer the marked reply
  once
- ``cache.py``: Prompt-cache accounting done the way the provider does it, for the scripted model
- ``conversation.py``: A request read back as a conversation: the task, the tools offered, the calls
  made so far with their results, and what the model itself wrote along the way (its notes)
- ``diffscan.py``: Reading tool results the way a reviewer model would: find changed files, patches,
  findings
- ``fake.py``: ``ScriptedModel``: a deterministic stand-in for the Anthropic Messages API
- ``fix.py``: The scripted model as the fixer: fix the blocking findings it knows, answer each
- ``implement.py``: The scripted model as the writer: read the issue, find the function it names,
  fix a bug it recognises, run the tests, open one draft pull request
- ``judging.py``: the scripted judge of ``swarm eval``: shared content words decide
- ``learnings.py``: Earlier feedback the scripted reviewer honours: dismissed findings on unchanged
  code are not raised again
- ``ratelimit.py``: Per-key rate limits the way the provider applies them, for the scripted model
- ``review.py``: The scripted reviewer: read the PR, every page of its changed files, submit one
  review
- ``scripts.py``: What the scripted model does next, decided from the request alone (deterministic)
- ``server.py``: The scripted model over loopback HTTP, for processes that reach it via
  ANTHROPIC_BASE_URL
- ``validate.py``: The provider's request checks that catch real bugs in prompt assembly, and its
  window check
"""

from sandbox.model.fake import ScriptedModel
from sandbox.model.server import ScriptedServer

__all__ = ["ScriptedModel", "ScriptedServer"]
