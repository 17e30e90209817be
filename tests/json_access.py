"""Typed reads of JSON in tests: a step into a value asserts its shape, so a test indexes a
request or a record as checked JSON rather than as an untyped dict."""

from __future__ import annotations

from agents.json_value import JSONObject, JSONValue


def obj(value: JSONValue) -> JSONObject:
    assert isinstance(value, dict), value
    return value


def objs(value: JSONValue) -> list[JSONObject]:
    assert isinstance(value, list), value
    return [obj(item) for item in value]


def text(value: JSONValue) -> str:
    assert isinstance(value, str), value
    return value
