"""Call overlays from configuration: a role laid over exactly the calls that look at some paths.

``SWARM_PATH_OVERLAYS`` maps path globs to role ids (``{"src/auth/**": "security-reviewer"}``).
A call gets the overlay when the turn before it touched a matching path: a tool the model
called with that ``path``, or a tool result that lists that file. The next call that does not
is back to the session's chain. Overlays are system blocks after the cached prefix (see
``agents.llm.request``), resolved call > session > agent, never stored as a message. A
command's focus is a call overlay too; it comes with the envelope and holds all its calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase

from agents.roles import Role, RoleChain

_FILENAME = re.compile(r'"(?:filename|path)"\s*:\s*"([^"\\]{1,500})"')

ChainFor = Callable[[Sequence[Mapping[str, object]]], RoleChain]


def _touched(messages: Sequence[Mapping[str, object]]) -> set[str]:
    """Paths the last assistant turn asked for and the last user turn's tool results list."""
    paths: set[str] = set()
    for message in messages[-2:]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and isinstance(block.get("input"), Mapping):
                value = block["input"].get("path")
                if isinstance(value, str):
                    paths.add(value.lstrip("/"))
            elif block.get("type") == "tool_result":
                paths.update(_FILENAME.findall(str(block.get("content"))))
    return paths


def path_overlays(chain: RoleChain, rules: Sequence[tuple[str, Role]]) -> ChainFor:
    """The chain for each call: ``chain`` with the first rule's role as the call overlay when
    the previous turn touched a path its glob matches, ``chain`` unchanged otherwise. A call
    overlay ``chain`` already holds (a PR command's focus, from the envelope) holds every call:
    the person asked for it, so a path rule does not take its place."""

    def chain_for(messages: Sequence[Mapping[str, object]]) -> RoleChain:
        if not rules or chain.call is not None:
            return chain
        touched = _touched(messages)
        for glob, role in rules:
            if any(fnmatchcase(path, glob) for path in touched):
                return chain.with_call(role)
        return chain

    return chain_for
