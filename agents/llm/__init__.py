"""The LLM layer: prompt assembly (cached prefix + ephemeral turn), the Anthropic client, usage.

Import ``agents.llm.client`` only where a model is called: it pulls in the anthropic SDK
(seconds of import time); the prompt and usage modules are light.

- ``client.py``: ``LLMClient``: the one place swarm talks to the Anthropic SDK (``AsyncAnthropic``
  on httpx2)
- ``compaction.py``: Keeping a session's history under its context budget by stubbing older tool
  results
- ``context.py``: The context budget of a session: how many input tokens a request may carry, and
  its tier
- ``errors.py``: Errors of the LLM layer
- ``estimate.py``: Token estimates before a call: characters of the request over a per-model ratio,
  calibrated from each answer's ``usage`` (all three input counters), so estimates track the real
  tokenizer
- ``models.py``: The model registry: per model id its context window, output cap, prices and cache
  minimum
- ``outbound.py``: What leaves for the model: a ``messages.create`` request with every text passed
  through the redaction table
- ``prompt.py``: The cached prefix: built once per worker session, byte-identical on every call
- ``request.py``: ``build_request``: cached prefix + role overlays + history -> ``messages.create``
  kwargs
- ``turn.py``: The ephemeral layer: the per-turn user message (tool results, ``<turn_context>``,
  ``<recall>``)
- ``untrusted.py``: Delimiters for untrusted text (PR title/body/diff/comments, file contents,
  context files)
- ``usage.py``: Token usage and cost: cost per call from the model registry, cache hit ratio, cache
  misses
"""
