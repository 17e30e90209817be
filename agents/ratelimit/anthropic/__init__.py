"""The model API key's rate-limit policy: its meters, its limits, what answers say.

- ``throttle.py``: one API key's throttle: reserve before each call, settle after
- ``meters.py``: an API key's budget state (per model) and the decisions taken on it
- ``limits.py``: the numbers the key's throttle works with
- ``readings.py``: what the provider's answer says: rate-limit headers and retry-after
"""
