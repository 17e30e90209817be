"""GitHub's published GraphQL schema, fetched at test time: the npm package
``@octokit/graphql-schema`` (Octokit publishes GitHub's public schema there), pinned to one
version and checked against the sha512 npm recorded for it, kept in a cache folder
(``$SWARM_TEST_NPM_CACHE``, else ``~/.cache/swarm/npm``) so the repository stores none of it and a
second run downloads nothing.

Without the npm registry the tests that need the schema skip and say so, unless
``SWARM_TEST_REQUIRE_NPM=1`` (CI) makes that a failure, as the real-diff set does with PyPI.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import os
import re
import tarfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pytest
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLAbstractType,
    GraphQLEnumType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    build_schema,
    parse,
    value_from_ast_untyped,
)

from sandbox.github.releases import user_cache

PACKAGE = "@octokit/graphql-schema"
VERSION = "15.26.1"
TARBALL = f"https://registry.npmjs.org/{PACKAGE}/-/graphql-schema-{VERSION}.tgz"
# `dist.integrity` of that version in the registry's metadata: pinned here, so neither a changed
# tarball nor changed metadata can change the schema the tests hold the product to.
INTEGRITY = (
    "sha512-"
    "RFDC2MpRBd4AxSRvUeBIVeBU7ojN/SxDfALUd7iVYOSeEK3gZaqR2MGOysj4Zh2xj2RY5fQAUT+Oqq7hWTraMA=="
)
MEMBER = "package/schema.graphql"
REQUIRE_NPM = os.environ.get("SWARM_TEST_REQUIRE_NPM") == "1"
_TIMEOUT_S = 60.0


class SchemaUnavailable(RuntimeError):
    """The registry could not be reached or answered something else; the message says which."""


def cache_dir() -> Path:
    configured = os.environ.get("SWARM_TEST_NPM_CACHE")
    return Path(configured) if configured else user_cache("npm")


def _matches(data: bytes) -> bool:
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    return f"sha512-{digest}" == INTEGRITY


def tarball(cache: Path | None = None) -> bytes:
    """The package's tarball, from the cache (checked again) or from the registry."""
    kept = (cache or cache_dir()) / f"octokit-graphql-schema-{VERSION}.tgz"
    if kept.is_file():
        data = kept.read_bytes()
        if _matches(data):
            return data
    try:
        with urllib.request.urlopen(TARBALL, timeout=_TIMEOUT_S) as answer:
            data = bytes(answer.read())
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise SchemaUnavailable(f"cannot reach the npm registry ({TARBALL}): {exc}") from None
    if not _matches(data):
        raise SchemaUnavailable(f"{PACKAGE} {VERSION}: the download does not match its sha512")
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(kept)  # whole or not at all: a cut download never counts as cached
    return data


def schema_text(cache: Path | None = None) -> str:
    with tarfile.open(fileobj=io.BytesIO(tarball(cache)), mode="r:gz") as archive:
        handle = archive.extractfile(MEMBER)
        if handle is None:
            raise SchemaUnavailable(f"{PACKAGE} {VERSION} has no {MEMBER}")
        return handle.read().decode("utf-8")


@functools.cache
def _built() -> GraphQLSchema:
    # Version 15.26.1 declares two fields of `EnterpriseOwnerInfo` twice, identically
    # (`repositoryDeployKeySetting`, `...Organizations`), which graphql-core's SDL check refuses;
    # the schema built without that check passes `validate_schema`.
    return build_schema(schema_text(), assume_valid_sdl=True)


def github_schema() -> GraphQLSchema:
    """GitHub's schema, built once per process; skips (fails under CI) without the registry."""
    try:
        return _built()
    except SchemaUnavailable as exc:
        if REQUIRE_NPM:
            pytest.fail(f"the npm registry is required here (SWARM_TEST_REQUIRE_NPM=1): {exc}")
        pytest.skip(f"GitHub's GraphQL schema cannot be fetched: {exc}")


# GitHub's scalars and the JSON each arrives as (Float may arrive as a whole number).
_STRING_SCALARS = frozenset(
    {
        "String",
        "ID",
        "URI",
        "HTML",
        "DateTime",
        "Date",
        "PreciseDateTime",
        "GitTimestamp",
        "GitObjectID",
        "GitRefname",
        "GitSSHRemote",
        "Base64String",
        "BigInt",
        "X509Certificate",
        "CustomPropertyValue",
    }
)
_GIT_OID = re.compile(r"[0-9a-f]{40}")


def _scalar_problem(name: str, value: object) -> str | None:
    if name in _STRING_SCALARS:
        if not isinstance(value, str):
            return f"{name} should be a string, got {value!r}"
        if name in ("DateTime", "PreciseDateTime", "GitTimestamp"):
            try:
                datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return f"{name} should be ISO 8601, got {value!r}"
        if name == "GitObjectID" and not _GIT_OID.fullmatch(value):
            return f"GitObjectID should be 40 hex digits, got {value!r}"
        return None
    if name == "Int":
        ok = isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31
        return None if ok else f"Int should be a 32-bit integer, got {value!r}"
    if name == "Float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else f"Float should be a number, got {value!r}"
    if name == "Boolean":
        return None if isinstance(value, bool) else f"Boolean should be a bool, got {value!r}"
    return f"no rule here for the scalar {name} (add one)"


class _Walker:
    """Checks one answer's ``data`` against the document's selections and the schema's types."""

    def __init__(self, schema: GraphQLSchema, document: DocumentNode, variables: dict[str, Any]):
        self.schema = schema
        self.variables = variables
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.problems: list[str] = []

    def included(self, node: FieldNode | InlineFragmentNode | FragmentSpreadNode) -> bool:
        for directive in node.directives or ():
            name = directive.name.value
            if name not in ("skip", "include"):
                continue
            [arg] = [a for a in directive.arguments if a.name.value == "if"]
            value = value_from_ast_untyped(arg.value, self.variables)
            if bool(value) == (name == "skip"):
                return False
        return True

    def applies(self, condition: str | None, concrete: GraphQLObjectType | None) -> bool:
        if condition is None:
            return True
        if concrete is None:
            return False
        wanted = self.schema.get_type(condition)
        if wanted is None:
            return False
        if isinstance(wanted, GraphQLObjectType):
            return wanted is concrete
        return self.schema.is_sub_type(cast(GraphQLAbstractType, wanted), concrete)

    def collect(
        self,
        selections: Iterable[SelectionSetNode],
        concrete: GraphQLObjectType | None,
        into: dict[str, list[FieldNode]],
    ) -> None:
        """The fields by response key, fragments that apply to ``concrete`` included."""
        for selection_set in selections:
            for node in selection_set.selections:
                if not self.included(cast(Any, node)):
                    continue
                if isinstance(node, FieldNode):
                    key = node.alias.value if node.alias else node.name.value
                    into.setdefault(key, []).append(node)
                elif isinstance(node, InlineFragmentNode):
                    condition = node.type_condition.name.value if node.type_condition else None
                    if self.applies(condition, concrete):
                        self.collect([node.selection_set], concrete, into)
                elif isinstance(node, FragmentSpreadNode):
                    fragment = self.fragments[node.name.value]
                    if self.applies(fragment.type_condition.name.value, concrete):
                        self.collect([fragment.selection_set], concrete, into)

    def composite(
        self, parent: GraphQLOutputType, selections: list[SelectionSetNode], value: object, at: str
    ) -> None:
        if not isinstance(value, dict):
            self.problems.append(f"{at}: {parent} should be an object, got {value!r}")
            return
        named = cast(GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType, parent)
        concrete: GraphQLObjectType | None = named if isinstance(named, GraphQLObjectType) else None
        typename = value.get("__typename")
        if isinstance(typename, str):
            told = self.schema.get_type(typename)
            if not isinstance(told, GraphQLObjectType):
                self.problems.append(f"{at}.__typename: {typename!r} is no object type")
                return
            if concrete is not None and told is not concrete:
                self.problems.append(f"{at}.__typename: {typename!r} where {concrete} is")
                return
            if concrete is None and not self.schema.is_sub_type(
                cast(GraphQLAbstractType, named), told
            ):
                self.problems.append(f"{at}.__typename: {typename!r} is not a {named}")
                return
            concrete = told
        fields: dict[str, list[FieldNode]] = {}
        self.collect(selections, concrete, fields)
        for key in value.keys() - fields.keys():
            self.problems.append(f"{at}.{key}: not selected")
        for key, nodes in fields.items():
            where = f"{at}.{key}"
            if key not in value:
                self.problems.append(f"{where}: selected, missing from the answer")
                continue
            name = nodes[0].name.value
            if name == "__typename":
                if not isinstance(typename, str):
                    self.problems.append(f"{where}: should be a type name, got {typename!r}")
                continue
            owner = concrete or named
            definition = owner.fields.get(name) if not isinstance(owner, GraphQLUnionType) else None
            if definition is None:
                self.problems.append(f"{where}: {owner} has no field {name}")
                continue
            subs = [n.selection_set for n in nodes if n.selection_set is not None]
            self.value(definition.type, subs, value[key], where)

    def value(
        self, type_: GraphQLOutputType, subs: list[SelectionSetNode], value: object, at: str
    ) -> None:
        if isinstance(type_, GraphQLNonNull):
            if value is None:
                self.problems.append(f"{at}: {type_} is null")
                return
            type_ = type_.of_type
        if value is None:
            return
        if isinstance(type_, GraphQLList):
            if not isinstance(value, list):
                self.problems.append(f"{at}: {type_} should be a list, got {value!r}")
                return
            for i, item in enumerate(value):
                self.value(type_.of_type, subs, item, f"{at}[{i}]")
        elif isinstance(type_, GraphQLEnumType):
            if not isinstance(value, str) or value not in type_.values:
                self.problems.append(f"{at}: {value!r} is not a member of {type_}")
        elif isinstance(type_, GraphQLScalarType):
            problem = _scalar_problem(type_.name, value)
            if problem:
                self.problems.append(f"{at}: {problem}")
        else:
            self.composite(type_, subs, value, at)


def answer_problems(
    schema: GraphQLSchema, document: str, variables: dict[str, Any] | None, data: object
) -> list[str]:
    """How ``data`` (an answer's ``data``, as JSON) departs from what GitHub's schema says the
    document's answer is: keys that were not selected or are missing, nulls where the schema
    says non-null, lists, scalar types, enum members, ``__typename`` of abstract types."""
    parsed = parse(document)
    [operation] = [d for d in parsed.definitions if isinstance(d, OperationDefinitionNode)]
    root = schema.get_root_type(operation.operation)
    assert root is not None
    walker = _Walker(schema, parsed, dict(variables or {}))
    walker.composite(root, [operation.selection_set], data, operation.operation.value)
    return walker.problems


def page_problems(document: str, variables: dict[str, Any] | None, data: object) -> list[str]:
    """Connections answered with more ``nodes``/``edges`` than their ``first``/``last`` asked."""
    parsed = parse(document)
    values = dict(variables or {})
    problems: list[str] = []

    def walk(selection_set: SelectionSetNode | None, value: object, at: str) -> None:
        if selection_set is None or value is None:
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                walk(selection_set, item, f"{at}[{i}]")
            return
        if not isinstance(value, dict):
            return
        for node in selection_set.selections:
            if isinstance(node, InlineFragmentNode):
                walk(node.selection_set, value, at)
            if not isinstance(node, FieldNode):
                continue
            key = node.alias.value if node.alias else node.name.value
            inner = value.get(key)
            for arg in node.arguments:
                size = value_from_ast_untyped(arg.value, values)
                if arg.name.value not in ("first", "last") or not isinstance(size, int):
                    continue
                for part in ("nodes", "edges"):
                    got = inner.get(part) if isinstance(inner, dict) else None
                    if isinstance(got, list) and len(got) > size:
                        problems.append(
                            f"{at}.{key}.{part}: {len(got)} where {arg.name.value}: {size}"
                        )
            walk(node.selection_set, inner, f"{at}.{key}")

    for definition in parsed.definitions:
        if isinstance(definition, OperationDefinitionNode):
            walk(definition.selection_set, data, definition.operation.value)
    return problems
