from tests.memory.real_worker import backend_swarm, make_swarm
from tests.store.backends import pg_session_url, sqlite_template, store, store_target, worker

__all__ = [
    "backend_swarm",
    "make_swarm",
    "pg_session_url",
    "sqlite_template",
    "store",
    "store_target",
    "worker",
]
