from tests.sandbox_fixtures import make_sandbox, sandbox

__all__ = ["make_sandbox", "sandbox"]
