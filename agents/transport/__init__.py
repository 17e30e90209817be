"""The one way to GitHub over HTTP, beneath both the identity layer and the gateway.

A :class:`~agents.transport.client.GitHubTransport` holds one identity's connection pool (keep-
alive, a TLS context shared per process, nothing read from the host environment), its own
githubkit configuration (its own cache strategy, no HTTP cache, no retries, no throttler) and the
API's REST and GraphQL URLs, and translates failures into errors that never carry a credential.
Auth strategies (:mod:`agents.transport.auth`) say which credential a request carries.

This package imports nothing else of ours: ``agents.identity`` and ``agents.github`` both build
on it without importing each other. Light names are importable from here; githubkit loads only
with :mod:`agents.transport.client` and :mod:`agents.transport.auth`.

- ``auth.py``: Which credential a request carries: small strategies githubkit and httpx both
  understand
- ``calls.py``: One call to GitHub as an identity, said once for both layers that send such calls
- ``client.py``: githubkit set up for one identity, and the one place GitHub HTTP failures are
  translated
- ``credentials.py``: What kind of GitHub credential a string is, by GitHub's documented prefixes
  only
- ``errors.py``: What the transport raises: messages name the API, method and path, never a header
  or a credential
- ``pool.py``: One identity's connection pool: kept alive across calls, one TLS context per process
- ``reply.py``: A GitHub answer reduced to what callers judge it by, holding no credential
- ``urls.py``: Where an API's REST and GraphQL endpoints live: github.com, GitHub Enterprise, the
  sandbox
"""

from agents.transport.errors import CredentialRefused, GitHubUnreachable, TransportError
from agents.transport.urls import ApiUrls

__all__ = ["ApiUrls", "CredentialRefused", "GitHubUnreachable", "TransportError"]
