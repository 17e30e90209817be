"""Dispatch: a planned task becomes a sealed envelope with a down-scoped credential.

Mint (``agents.identity``) -> seal (here) -> open and admit (here, in the worker).

- ``dispatcher.py``: turns a planned task into a sealed envelope
- ``envelope.py``: the dispatch envelope: what one worker does, as whom, within which budgets
- ``sealing.py``: the envelope's credential, encrypted and signed under the swarm key
- ``admission.py``: the checks a sealed envelope passes before a worker does anything with it
"""
