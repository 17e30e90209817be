"""Event tests: the store on both backends, the sandbox GitHub with signed deliveries."""

from tests.store.backends import pg_session_url, sqlite_template, store, store_target

__all__ = ["pg_session_url", "sqlite_template", "store", "store_target"]
