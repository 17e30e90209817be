"""The model registry: per model id its context window, output cap, prices and cache minimum.

Built-in entries hold the provider's published figures; ``SWARM_MODELS`` (JSON) overrides any
field of a built-in entry or adds a model. An id the registry does not know is an error that
names ``SWARM_MODEL`` and ``SWARM_MODELS``: guessing a window would let a request outgrow the
real one, and guessing prices would make cost caps meaningless.

Dated snapshots (``claude-haiku-4-5-20251001``) resolve to their alias's entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.errors import SwarmError

# Multipliers of the input price, when an entry does not give its cache prices itself.
CACHE_WRITE_5M: Final = 1.25
CACHE_WRITE_1H: Final = 2.0
CACHE_READ: Final = 0.1
MODELS_SETTING: Final = "SWARM_MODELS"
MODEL_SETTING: Final = "SWARM_MODEL"


class UnknownModel(SwarmError, LookupError):
    """The model id is not in the registry; the message names the settings that fix it."""

    def __str__(self) -> str:
        return str(self.args[0])


class ModelRegistryError(SwarmError, ValueError):
    """``SWARM_MODELS`` holds something that is not a valid model description."""


class ModelSpec(BaseModel):
    """What swarm must know about a model to budget its context and its cost."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_window: int = Field(gt=0)  # input + output tokens of one request
    max_output_tokens: int = Field(gt=0)
    input_per_mtok: float = Field(ge=0)  # USD per million tokens
    output_per_mtok: float = Field(ge=0)
    cache_write_5m_per_mtok: float | None = Field(default=None, ge=0)
    cache_write_1h_per_mtok: float | None = Field(default=None, ge=0)
    cache_read_per_mtok: float | None = Field(default=None, ge=0)
    # Below this many prefix tokens the provider caches nothing, silently.
    min_cacheable_tokens: int = Field(default=1024, ge=0)
    # Older models counted cache reads against input tokens per minute; current ones do not.
    cache_reads_count_for_rate_limit: bool = False

    @property
    def write_5m(self) -> float:
        return _or(self.cache_write_5m_per_mtok, self.input_per_mtok * CACHE_WRITE_5M)

    @property
    def write_1h(self) -> float:
        return _or(self.cache_write_1h_per_mtok, self.input_per_mtok * CACHE_WRITE_1H)

    @property
    def read(self) -> float:
        return _or(self.cache_read_per_mtok, self.input_per_mtok * CACHE_READ)


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _spec(window: int, output: int, price_in: float, price_out: float, minimum: int) -> ModelSpec:
    return ModelSpec(
        context_window=window,
        max_output_tokens=output,
        input_per_mtok=price_in,
        output_per_mtok=price_out,
        min_cacheable_tokens=minimum,
    )


# Published figures at the time of writing; correct any of them with SWARM_MODELS.
BUILTIN: Final[Mapping[str, ModelSpec]] = {
    "claude-opus-5": _spec(200_000, 64_000, 5.0, 25.0, 4096),
    "claude-opus-4-8": _spec(200_000, 64_000, 5.0, 25.0, 4096),
    "claude-opus-4-7": _spec(200_000, 64_000, 5.0, 25.0, 4096),
    "claude-opus-4-6": _spec(200_000, 64_000, 5.0, 25.0, 4096),
    "claude-opus-4-5": _spec(200_000, 64_000, 5.0, 25.0, 4096),
    "claude-opus-4-1": _spec(200_000, 32_000, 15.0, 75.0, 1024),
    "claude-sonnet-4-6": _spec(200_000, 64_000, 3.0, 15.0, 1024),
    "claude-sonnet-4-5": _spec(200_000, 64_000, 3.0, 15.0, 1024),
    "claude-sonnet-4-0": _spec(200_000, 64_000, 3.0, 15.0, 1024),
    "claude-haiku-4-5": _spec(200_000, 64_000, 1.0, 5.0, 4096),
    # The offline scripted model is billed like Sonnet so demo and bench figures read true.
    "scripted": _spec(200_000, 64_000, 3.0, 15.0, 1024),
}


class ModelRegistry:
    """Built-in entries plus overrides; ``spec(model_id)`` or a clear :class:`UnknownModel`."""

    def __init__(self, overrides: Mapping[str, object] | None = None) -> None:
        self._specs: dict[str, ModelSpec] = dict(BUILTIN)
        problems: list[str] = []
        for model_id, fields in (overrides or {}).items():
            if not isinstance(fields, Mapping):
                problems.append(f"{model_id}: expected an object of fields")
                continue
            base = self._specs.get(model_id)
            merged = {**(base.model_dump(exclude_unset=False) if base else {}), **fields}
            try:
                self._specs[model_id] = ModelSpec.model_validate(merged)
            except ValidationError as exc:
                for error in exc.errors(include_input=False, include_url=False):
                    where = ".".join(str(p) for p in error["loc"])
                    problems.append(f"{model_id}.{where}: {error['msg']}")
        if problems:
            raise ModelRegistryError(f"{MODELS_SETTING}: " + "; ".join(problems))

    def known(self) -> list[str]:
        return sorted(self._specs)

    def resolve(self, model_id: str) -> str:
        """The registry key for ``model_id`` (its alias for a dated snapshot)."""
        if model_id in self._specs:
            return model_id
        for alias in sorted(self._specs, key=len, reverse=True):
            rest = model_id.removeprefix(alias + "-")
            if rest != model_id and rest.isdigit():
                return alias
        raise UnknownModel(
            f"{MODEL_SETTING}: model {model_id!r} is not in the model registry (known: "
            f"{', '.join(self.known())}); pick one of those, or describe it in {MODELS_SETTING} "
            f'(JSON: {{"{model_id}": {{"context_window": ..., "max_output_tokens": ..., '
            '"input_per_mtok": ..., "output_per_mtok": ...}})'
        )

    def spec(self, model_id: str) -> ModelSpec:
        return self._specs[self.resolve(model_id)]


DEFAULT_REGISTRY: Final = ModelRegistry()
