"""The GitHub webhook receiver (``swarm webhook serve``).

- ``app.py``: ``POST /github/webhook`` and ``GET /healthz``, as a Starlette app
- ``serve.py``: the receiver built from settings and run under uvicorn
- ``connections.py``: what a sender may hold of the receiver: header, body and idle deadlines
  and a cap on open connections, in uvicorn's h11 protocol
- ``sink.py``: what the receiver does with accepted work after it has answered GitHub
- ``enqueue.py``: the two ways to start the flow run an event asks for
- ``queue.py``: the store as the receiver's queue: claims on accepted deliveries, renewed while
  the receiver lives, and a dead receiver's unfinished work taken over
- ``recovery.py``: deliveries GitHub could not make, found in the App's delivery log and asked for
  again
- ``learning.py``: learning from review replies and resolved threads within seconds
"""
