"""The worker runtime, plain Python: the shared nouns at this level, one folder per step and layer.

- ``confine/``: Confinement: a repository's code runs only in a sandbox (``bwrap``), or not at all
- ``dispatch/``: Dispatch: a planned task becomes a sealed envelope with a down-scoped credential
- ``errors.py``: The root of the errors a person can act on (``SwarmError``) and the exit statuses
  the CLI ends with
- ``eval/``: Measuring review quality: a labelled set, findings scored against it, a judge
- ``event_kinds.py``: What a transcript event can be: vocabulary the store and memory both import,
  never each other
- ``events/``: GitHub events turned into work: signatures, payload fields, routing, PR commands
- ``github/``: GitHub layer: per-identity gateway over githubkit, throttle and buckets, REST-first
  policy
- ``identity/``: GitHub identities for workers: App JWTs, down-scoped installation tokens, bot PATs,
  and the worker-side proof that a credential is the identity its envelope names
- ``json_value.py``: What JSON can hold, as one recursive type (``JSONValue``, ``JSONObject``)
- ``memory_origin.py``: Where a memory came from (``MemoryOrigin``): a noun the store and memory
  both import, never each other
- ``kinds/``: Kinds of work, one module each (what starts it, how its items are found), and which
  role does which: the one place a role's ``kind:`` and ``command:`` are read
- ``llm/``: The LLM layer: prompt assembly (cached prefix + ephemeral turn), the Anthropic client,
  usage
- ``memory/``: Memory surfaces: learnings from feedback, agent operational memory, bounded history
  retrieval
- ``outcome.py``: What a worker reports back to the flow that dispatched it: plain data, nothing
  secret
- ``permissions.py``: The worker permission ceiling and the GitHub App permission allow-list, in one
  place
- ``planning/``: Planning: which pull requests and issues to work on, in which shards, at what cost
- ``posting/``: Posting: the exactly-once writes to GitHub and the hidden markers that prove them
- ``private_files.py``: Folders and files only this user can reach: the data directory, the store,
  the warm socket
- ``processes.py``: Whether a process still runs, asked of the operating system (no signal is sent)
- ``ratelimit/``: The rate-limit engine both provider layers build on: clocks and shared-state
  backends
- ``redact/``: Secret redaction: one rule table (:mod:`agents.redact.rules`) plus the configured
  secret values, used for store writes, log records, Prefect artifacts and every body sent to GitHub
  or to the model
- ``roles/``: Roles: the ``Role`` schema, the call > session > agent overlay chain, and its
  resolution
- ``settings/``: The ``SWARM_*`` settings: one model, the secrets it reads, and the names and docs
  made from it
- ``store/``: The shared SQL store (SQLite or PostgreSQL) for runs, transcripts, audit and memory
  rows
- ``tools/``: What the model may call
- ``transport/``: The one way to GitHub over HTTP, beneath both the identity layer and the gateway
- ``wiring.py``: The one place the layers meet: builds a ``Runtime`` (store, roles, sealer,
  dispatcher, verifier, gateways, the worker's narrow ``WorkerDeps``) from ``Settings`` and a model
  client
- ``work.py``: The unit of work: one ``Task`` from discovery to the worker, and the ``Assignment``
  of a role
- ``worker/``: The worker: open the envelope, verify the identity, run the session loop, report an
  outcome
- ``workspace/``: The writer's working copy: paths confined to it, protected paths and caps,
  literal search, the change set a commit takes
- ``writer/``: The writer's bench: base, branch, working copy, sandboxed tests and the draft pull
  request's body, set up by code so the model never holds a token
"""
