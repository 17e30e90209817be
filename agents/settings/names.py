"""The environment variable names of the settings model: which exist, and which do not.

A misspelled setting (``SWARM_STORE_ULR``) must stop the program instead of leaving the default
in force, so every ``SWARM_*`` variable in the environment has to be a name this module derives
from the model: a top-level field (``SWARM_STORE_URL``), or a field of a nested model, with
``__`` between the parts (``SWARM_IDENTITIES__TRIAGE__APP_ID``). Messages carry names only,
never values.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from agents.redact import is_secret_key

NESTED = "__"
# Comma-separated names (a trailing * matches a prefix) of SWARM_* variables that are not swarm
# settings on purpose, e.g. ones your own scripts read: swarm leaves them alone.
ALLOW_UNKNOWN_ENV = "SWARM_ALLOW_UNKNOWN"
# The project's own test suite and benches read these (SWARM_TEST_PG_URL, ...): they are never
# settings, and a bench that loads the settings must not refuse the variable that started it.
RESERVED_PREFIXES = ("SWARM_TEST_",)


def identity_setting(identity: str, field: str) -> str:
    """The variable that sets ``field`` of the identity named ``identity``, as a person types it
    (``SWARM_IDENTITIES__TRIAGE__APP_ID``)."""
    return f"SWARM_IDENTITIES{NESTED}{identity.upper()}{NESTED}{field.upper()}"


@dataclass(frozen=True)
class SettingNames:
    """Every variable name ``model`` reads, in upper case, with the nested shapes it accepts."""

    flat: frozenset[str]
    # SWARM_<FIELD>__<SUB> for a nested model; SWARM_<FIELD>__<KEY>__<SUB> for a dict of them.
    nested: Mapping[str, frozenset[str]]
    keyed: Mapping[str, frozenset[str]]

    def known(self, name: str) -> bool:
        if name in self.flat:
            return True
        head, _, rest = name.partition(NESTED)
        if head in self.nested:
            return rest in self.nested[head]
        if head in self.keyed:
            key, _, sub = rest.partition(NESTED)
            return bool(key) and (not sub or sub in self.keyed[head])
        return False

    def suggest(self, name: str) -> str | None:
        """The closest real name, for a ``did you mean`` hint."""
        head, _, rest = name.partition(NESTED)
        if head in self.keyed and rest:
            key = rest.partition(NESTED)[0]
            choices = [f"{head}{NESTED}{key}{NESTED}{field}" for field in self.keyed[head]]
        elif head in self.nested:
            choices = [f"{head}{NESTED}{field}" for field in self.nested[head]]
        else:
            choices = [*self.flat, *(f"{head}{NESTED}" for head in self.nested)]
        close = difflib.get_close_matches(name, sorted(choices), n=1, cutoff=0.7)
        return close[0] if close else None


def setting_names(model: type[BaseModel], prefix: str) -> SettingNames:
    flat, nested, keyed = set(), {}, {}
    for field_name, field in model.model_fields.items():
        if field.validation_alias is not None:
            continue  # read under its own name (ANTHROPIC_API_KEY), not under the prefix
        name = f"{prefix}{field_name}".upper()
        flat.add(name)
        inner = _model_in(field.annotation)
        if inner is not None:
            nested[name] = _field_names(inner)
        value = _dict_value_model(field.annotation)
        if value is not None:
            keyed[name] = _field_names(value)
    return SettingNames(frozenset(flat), nested, keyed)


def unknown_variables(environ: Mapping[str, str], names: SettingNames, prefix: str) -> list[str]:
    """One problem line per ``prefix`` variable that is no setting and not allowed on purpose
    (named in :data:`ALLOW_UNKNOWN_ENV`)."""
    patterns = [a.strip().upper() for a in environ.get(ALLOW_UNKNOWN_ENV, "").split(",")]
    patterns = [p for p in patterns if p]
    problems = []
    for raw in sorted(environ):
        name = raw.upper()
        if not name.startswith(prefix) or name == ALLOW_UNKNOWN_ENV:
            continue
        if name.startswith(RESERVED_PREFIXES):
            continue
        if names.known(name) or _allowed(name, patterns):
            continue
        close = names.suggest(name)
        hint = f" (did you mean {close}?)" if close else ""
        problems.append(f"{raw} is not a swarm setting{hint}")
    if problems:
        problems[-1] += (
            f"; unset it, or name it in {ALLOW_UNKNOWN_ENV} if it is meant for something else"
        )
    return problems


def validation_problems(error: ValidationError, prefix: str) -> list[str]:
    """``NAME: what is wrong`` per error, named as the person set it; inputs never included."""
    lines = []
    for item in error.errors(include_input=False, include_url=False):
        loc = [str(part) for part in item["loc"]]
        name = (prefix + NESTED.join(loc)).upper() if loc else ""
        if loc and loc[0].lower().startswith("anthropic_"):
            name = NESTED.join(loc).upper()
        message = str(item["msg"]).removeprefix("Value error, ")
        lines.append(_named(name, message) if name else message)
    return lines


def _named(name: str, message: str) -> str:
    # "SWARM_SEALING_KEY: must ..." reads as a leaked secret to redaction ("must" the value), so
    # a secret setting is named without the colon.
    if not is_secret_key(name):
        return f"{name}: {message}"
    return f"{name} {message}" if message.startswith("must ") else f"{name} is not valid: {message}"


FIRST_STEPS = (
    "to try swarm without a GitHub App: `swarm demo`, or `swarm sandbox serve` and load "
    "the sandbox.env it writes"
)


def missing_problem(missing: list[str], *, first_start: bool) -> str:
    """Every missing setting in one line; on a first start, where to begin instead."""
    if first_start:
        return f"swarm is not configured: set {', '.join(missing)}\n{FIRST_STEPS}"
    return f"missing settings: {', '.join(missing)} (docs/configuration.md explains each)"


def problems_message(problems: list[str]) -> str:
    """One problem as one line; several as a count and one indented line each."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} settings need fixing:\n  " + "\n  ".join(problems)


def _allowed(name: str, patterns: list[str]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def _field_names(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(name.upper() for name in model.model_fields)


def _members(annotation: object) -> tuple[object, ...]:
    """``X | None`` -> (X, None); anything else -> (annotation,)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _model_in(annotation: object) -> type[BaseModel] | None:
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return member
    return None


def _dict_value_model(annotation: object) -> type[BaseModel] | None:
    for member in _members(annotation):
        if typing.get_origin(member) is dict:
            return _model_in(typing.get_args(member)[1])
    return None
