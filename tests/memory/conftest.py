from tests.store.backends import pg_session_url, store, store_target, worker

__all__ = ["pg_session_url", "store", "store_target", "worker"]
