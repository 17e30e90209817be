from tests.store.backends import pg_session_url, sqlite_template, store, store_target, worker

__all__ = ["pg_session_url", "sqlite_template", "store", "store_target", "worker"]
