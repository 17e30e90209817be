"""GitHub events turned into work: signature checks, the fields we read from payloads, which
event means which work, and PR commands. Plain Python; the web server and the enqueueing live
in ``flows``.

- ``commands.py``: PR commands: ``/swarm review [FOCUS]``, ``/swarm security``, ``/swarm help``, and
  who may give them
- ``payloads.py``: The few payload fields the swarm reads, as typed models that ignore everything
  else
- ``routing.py``: Which GitHub event means which work: pure, a payload in, work or the reason to
  ignore it out
- ``signature.py``: Is this delivery from GitHub? ``X-Hub-Signature-256`` (sha256 only) over the raw
  body
"""
