"""File contents of the seeded repositories and of the seeded pull requests' changes."""

from __future__ import annotations

WIDGETS_CORE = '''"""Widgets: named, sized things."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Widget:
    name: str
    size: int = 1

    def resize(self, size: int) -> Widget:
        return Widget(self.name, size)


def make_widget(name: str, size: int = 1) -> Widget:
    return Widget(name=name, size=size)


def total_size(widgets: list[Widget]) -> int:
    return sum(w.size for w in widgets)
'''

WIDGETS_CACHE = '''"""A tiny least-recently-used cache for built widgets."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    def __init__(self) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self.max_size = 128

    def get(self, key: K) -> V | None:
        if key not in self._items:
            return None
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self.max_size:
            self._items.popitem(last=False)
'''

WIDGETS_TEST_CORE = """from widgets.core import Widget, make_widget, total_size


def test_make_widget_defaults_to_size_one() -> None:
    assert make_widget("a") == Widget("a", 1)


def test_total_size_adds_sizes() -> None:
    assert total_size([make_widget("a", 2), make_widget("b", 3)]) == 5
"""

WIDGETS_TEST_CACHE = """from widgets.cache import LRUCache


def test_get_returns_what_was_put() -> None:
    cache: LRUCache[str, int] = LRUCache()
    cache.put("a", 1)
    assert cache.get("a") == 1
"""

CONTRIBUTING = """# Contributing to {name}

- Every behaviour change comes with a test under `tests/`.
- No debugging leftovers (`print(`, `pdb.set_trace()`, `breakpoint()`) in `src/`.
- Keep pull requests small; describe the why in the PR body.
- Run `pytest` and `ruff check` before asking for review.
"""

AGENTS = """# Notes for automated reviewers

- Review comments must be specific and actionable; cite the file and line.
- Do not approve pull requests; leave COMMENT or REQUEST_CHANGES reviews only.
- The public API lives in `src/widgets/__init__.py`; flag changes to it.
"""

PYPROJECT = '[project]\nname = "{name}"\nversion = "{version}"\nrequires-python = ">=3.11"\n'

WIDGETS_FILES = {
    "README.md": "# widgets\n\nSmall, sized widgets and a cache for them.\n",
    "CONTRIBUTING.md": CONTRIBUTING.format(name="widgets"),
    "AGENTS.md": AGENTS,
    "pyproject.toml": PYPROJECT.format(name="widgets", version="0.3.0"),
    "src/widgets/__init__.py": (
        'from widgets.core import Widget, make_widget\n\n__all__ = ["Widget", "make_widget"]\n'
    ),
    "src/widgets/core.py": WIDGETS_CORE,
    "src/widgets/cache.py": WIDGETS_CACHE,
    "tests/test_core.py": WIDGETS_TEST_CORE,
    "tests/test_cache.py": WIDGETS_TEST_CACHE,
}

# widgets #1: a debug print, a TODO, changed code with no test.
WIDGETS_SCALE = (
    WIDGETS_CORE
    + """

def scale(widget: Widget, factor: float) -> Widget:
    print(f"scaling {widget.name} by {factor}")
    # TODO: handle negative factors
    return widget.resize(int(widget.size * factor))
"""
)

# widgets #2: a leftover pdb.set_trace(); tests are touched.
WIDGETS_CACHE_CONFIGURABLE = WIDGETS_CACHE.replace(
    "    def __init__(self) -> None:\n"
    "        self._items: OrderedDict[K, V] = OrderedDict()\n"
    "        self.max_size = 128\n",
    "    def __init__(self, max_size: int = 128) -> None:\n"
    "        self._items: OrderedDict[K, V] = OrderedDict()\n"
    "        self.max_size = max_size\n",
).replace(
    "        if len(self._items) > self.max_size:\n",
    "        if len(self._items) > self.max_size:\n            import pdb; pdb.set_trace()\n",
)
WIDGETS_TEST_CACHE_EVICTS = (
    WIDGETS_TEST_CACHE
    + """

def test_oldest_entry_is_evicted_past_max_size() -> None:
    cache: LRUCache[str, int] = LRUCache(max_size=1)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") is None
"""
)

# widgets #3: clean, with a test.
WIDGETS_CORE_VALIDATED = WIDGETS_CORE.replace(
    "def make_widget(name: str, size: int = 1) -> Widget:\n",
    "def make_widget(name: str, size: int = 1) -> Widget:\n"
    "    if not name.strip():\n"
    '        raise ValueError("a widget needs a non-empty name")\n',
)
WIDGETS_TEST_CORE_VALIDATED = (
    WIDGETS_TEST_CORE.replace(
        "from widgets.core import Widget, make_widget, total_size\n",
        "import pytest\n\nfrom widgets.core import Widget, make_widget, total_size\n",
    )
    + """

def test_make_widget_refuses_a_blank_name() -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        make_widget("  ")
"""
)

GADGETS_REGISTRY = '''"""Where gadgets register themselves by name."""

from __future__ import annotations

from collections.abc import Callable

Factory = Callable[[], object]
_REGISTRY: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    _REGISTRY[name] = factory


def build(name: str) -> object:
    return _REGISTRY[name]()
'''

GADGETS_FILES = {
    "README.md": "# gadgets\n\nA registry of gadgets and a client to fetch them.\n",
    "CONTRIBUTING.md": CONTRIBUTING.format(name="gadgets"),
    "pyproject.toml": PYPROJECT.format(name="gadgets", version="1.2.0"),
    "src/gadgets/__init__.py": "",
    "src/gadgets/registry.py": GADGETS_REGISTRY,
    "tests/test_registry.py": (
        "from gadgets.registry import build, register\n\n\n"
        "def test_build_uses_the_registered_factory() -> None:\n"
        '    register("x", lambda: 42)\n    assert build("x") == 42\n'
    ),
}

GADGETS_CLIENT = '''"""Fetch gadgets from the gadget service."""

from __future__ import annotations

import urllib.request

DEFAULT_TIMEOUT_S = 10.0


def fetch(url: str, timeout: float = DEFAULT_TIMEOUT_S) -> bytes:
    # TODO: retry on 503
    print("fetching", url)
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()
'''


def gadget_plugin(index: int) -> str:
    extra = "    # TODO: make the weight configurable\n" if index == 17 else ""
    return (
        f'"""Gadget plugin {index:02d}."""\n\n'
        "from gadgets.registry import register\n\n\n"
        f"class Plugin{index:02d}:\n"
        f'    name = "plugin-{index:02d}"\n\n'
        "    def weight(self) -> int:\n"
        f"{extra}"
        f"        return {index}\n\n\n"
        f'register("plugin-{index:02d}", Plugin{index:02d})\n'
    )


DOCS_FILES = {
    "README.md": "# docs\n\nThe acme handbook.\n",
    "CONTRIBUTING.md": CONTRIBUTING.format(name="docs"),
    "docs/index.md": "# acme handbook\n\n- [Installing](install.md)\n",
    "docs/install.md": "# Installing\n\nRun `pip install widgets`.\n\nThen import it.\n",
}
DOCS_INSTALL_CLARIFIED = (
    "# Installing\n\nRun `pip install widgets` in a virtual environment.\n\n"
    "Then import it:\n\n```python\nimport widgets\n```\n"
)
