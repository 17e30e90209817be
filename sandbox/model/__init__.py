"""The scripted model: an offline, deterministic stand-in for the Anthropic Messages API."""

from sandbox.model.fake import ScriptedModel
from sandbox.model.server import ScriptedServer

__all__ = ["ScriptedModel", "ScriptedServer"]
