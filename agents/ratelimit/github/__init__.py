"""GitHub's rate-limit policy: what a request costs, an identity's buckets, what answers say.

- ``throttle.py``: one identity's throttle: waits, paces reads until the reset, takes turns
- ``registry.py``: every identity's throttle in one process, by bot login
- ``requests.py``: what a request costs and which bucket it draws from, before it is sent
- ``buckets.py``: an identity's budget state and the decision taken on it
- ``limits.py``: the numbers enforced for one identity (GitHub's published values by default)
- ``readings.py``: what GitHub's answers say about the budget: headers, ``/rate_limit``, pauses
- ``snapshot.py``: an identity's budget right now, for the Prefect UI, ``swarm limits`` and audit
"""
