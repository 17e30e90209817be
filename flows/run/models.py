"""Which model client a run talks to: the real Anthropic API, or the offline scripted model.

The scripted model (``sandbox.model``) is built here, at the flow's edge, and handed to the
runtime like any client: nothing under ``agents/`` knows it exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.llm.client import LLMClient
    from agents.settings.model import Settings
    from sandbox.model import ScriptedModel

SCRIPTED = "scripted"
# What the scripted model is billed as, so cost figures read like a real run's.
SCRIPTED_BILLING_MODEL = "claude-sonnet-4-6"
DEFAULT_LIVE_MODEL = "claude-sonnet-4-6"


@dataclass(frozen=True)
class ModelChoice:
    client: LLMClient
    # The model id requests name (and costs are priced as).
    model_id: str
    # The offline model behind ``client`` when it is the scripted one.
    scripted: ScriptedModel | None = None


def resolve_model(settings: Settings, model: str | None) -> str:
    """The model asked for, else the configured one; a configured API key upgrades the default
    ``scripted`` to Claude."""
    chosen = model or settings.model
    if chosen == SCRIPTED and model is None and settings.anthropic_api_key is not None:
        return DEFAULT_LIVE_MODEL
    return chosen


def scripted_model(settings: Settings | None = None) -> ModelChoice:
    """The real Anthropic client talking to the offline scripted model in this process."""
    from agents.llm.client import LLMClient
    from sandbox.model import ScriptedModel

    registry = settings.model_registry() if settings is not None else None
    scripted = ScriptedModel(require_api_key=False)
    client = LLMClient(
        api_key="scripted-offline-model", http_client=scripted.async_client(), registry=registry
    )
    return ModelChoice(client, SCRIPTED_BILLING_MODEL, scripted)


def open_model(settings: Settings, model: str | None) -> ModelChoice:
    chosen = resolve_model(settings, model)
    if chosen == SCRIPTED:
        return scripted_model(settings)
    from agents.llm.client import LLMClient

    client = LLMClient(
        api_key=settings.anthropic_api_key,
        base_url=settings.anthropic_base_url,
        proxy=settings.llm_proxy,
        registry=settings.model_registry(),
    )
    return ModelChoice(client, chosen)
