"""What leaves for GitHub: every body the bot posts, made safe to show under the bot's name.

The model read what the PR author wrote, so what it writes is as untrusted as the PR, and a tool
that posts text nobody rendered (a triage comment) must not be a way around that. So the one
request path (:meth:`agents.github.throttled_client.ThrottledClient.request`) passes every
``body`` of a write through :func:`sanitise_body`, after redaction:

- a mention (``@user``, ``@org/team``, also spelled as an entity such as ``&#64;``) pings nobody,
  except the logins the caller names as its own (``mentions``): code that means to ping says whom;
- an image (``![..](..)``) is a plain link: nothing is fetched when the page is shown, so its URL
  cannot carry out what the model read;
- raw HTML is text, except HTML comments (the hidden markers) and ``<details>``/``<summary>``;
- a link goes to ``https`` only, or to this GitHub's own pages (the sandbox serves them over
  ``http``): any other scheme (``javascript:``, ``data:``, ``http:``), a bare ``http://`` or
  ``www.`` that GitHub would link, and every link reference definition are text;
- a body is cut to GitHub's 65,536 characters, keeping its trailing hidden markers.

How: a zero-width space (U+200B) goes where the construct needs two characters side by side
(after ``@``, ``<``, ``!`` before ``[``, ``]`` before ``(`` or ``:``): GitHub shows the text as
written and finds no mention, tag, image or link in it. An escape or backticks would show
differently inside inline code; the space shows nothing there either, so inline code is not
parsed at all (parsing it exactly as GitHub does is where sanitisers go wrong). Fenced code
blocks are left byte for byte (a suggestion's replacement must apply as written; code renders
none of the above): the block structure is read as CommonMark reads it (markdown-it-py), and
only a fence at the start of a line outside any container counts. The result is stable:
sanitising a sanitised body changes nothing, so a body read back and posted again is unchanged.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from markdown_it import MarkdownIt

# GitHub refuses longer bodies ("body is too long (maximum is 65536 characters)").
MAX_BODY_CHARS = 65_536
MARK = "\u200b"
CUT_NOTE = "\n\n*(cut here: the text was longer than GitHub allows)*"

_FENCE_OPEN = re.compile(r"(?P<fence>`{3,}|~{3,})")
# Block structure only: the inline rules are not needed, and are slow on hostile text.
_COMMONMARK = MarkdownIt("commonmark").disable("inline")
_ALLOWED_TAG = re.compile(r"<(?:!--|/?summary>|/?details>|details open>)", re.I)
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_IMAGE = re.compile(r"!\[")
_DEFINITION = re.compile(r"\]:")
_LINK = re.compile(r"\]\((?P<gap>[ \t]*\n?[ \t]*)(?P<dest><[^>\n]*|[^\s]*)")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_BARE_URL = re.compile(r"(?:http|ftp)://", re.I)
_WWW = re.compile(r"(?<![A-Za-z0-9./:@_\-])www\.", re.I)
_AT_ENTITY = re.compile(r"&(?:#0*64|#[xX]0*40|commat);", re.I)
_MENTION = re.compile(r"@(?=[A-Za-z0-9&])(?P<login>[A-Za-z0-9][A-Za-z0-9-]*)?(?P<team>/[\w-]+)?")
_BACKSLASHED = re.compile(r"\\([!-/:-@\[-`{-~])")
_ASCII_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_ADDRESS_CHARS = _ASCII_ALNUM | frozenset("._+-")


@dataclass(frozen=True)
class Outbound:
    """What a body may keep: the logins the code itself mentions, and this GitHub's own web
    origin (links to its pages are the product's, whatever their scheme)."""

    mentions: frozenset[str] = frozenset()
    own_origin: str | None = None

    @classmethod
    def of(cls, mentions: Collection[str] = (), own_origin: str | None = None) -> Outbound:
        return cls(frozenset(m.lstrip("@").casefold() for m in mentions), own_origin)


def sanitise_json(payload: object, rules: Outbound) -> object:
    """``payload`` (a write's JSON) with every ``body`` string sanitised, at any depth (a
    review's inline comments carry theirs in a list)."""
    if isinstance(payload, dict):
        return {
            key: sanitise_body(value, rules)
            if key == "body" and isinstance(value, str)
            else sanitise_json(value, rules)
            for key, value in payload.items()
        }
    if isinstance(payload, list):
        return [sanitise_json(item, rules) for item in payload]
    return payload


def sanitise_body(text: str, rules: Outbound = Outbound()) -> str:
    """``text`` as the bot may post it (see the module's docstring)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = "".join(part if code else _inline(part, rules) for code, part in _blocks(text))
    return out if len(out) <= MAX_BODY_CHARS else _cut(out)


def _blocks(text: str) -> Iterator[tuple[bool, str]]:
    """``text`` in runs of (is fenced code, text), lines kept whole with their newlines.

    The block structure is CommonMark's, as GitHub parses it (a fence inside an HTML block or
    after a list item that a later line ends is not where a line-by-line reading puts it).
    Only a fence at the start of a line outside any container is code here: what a container
    holds is sanitised like text, which can only change code, never let text through."""
    lines = text.splitlines(keepends=True)
    code = [False] * len(lines)
    for token in _COMMONMARK.parse(text):
        if token.type == "fence" and token.level == 0 and token.map:
            first, end = token.map
            if first < len(lines) and lines[first][:1] in ("`", "~"):
                code[first:end] = [True] * (end - first)
    run: list[str] = []
    in_code = False
    for line, is_code in zip(lines, code, strict=True):
        if is_code != in_code and run:
            yield in_code, "".join(run)
            run = []
        in_code = is_code
        run.append(line)
    if run:
        yield in_code, "".join(run)


def _inline(text: str, rules: Outbound) -> str:
    text = _LINK.sub(lambda m: _link(m, rules), text)
    text = _DEFINITION.sub("]" + MARK + ":", text)
    text = _IMAGE.sub("!" + MARK + "[", text)
    text = _TAG_OPEN.sub(lambda m: _tag(m, text), text)
    text = _BARE_URL.sub(lambda m: _bare(m, text, rules), text)
    text = _WWW.sub(lambda m: m.group()[:3] + MARK + ".", text)
    text = _AT_ENTITY.sub("@" + MARK, text)
    return _MENTION.sub(lambda m: _mention(m, text, rules), text)


def _link(found: re.Match[str], rules: Outbound) -> str:
    if _destination_allowed(found["dest"], rules):
        return found.group()
    return "]" + MARK + found.group()[1:]


def _destination_allowed(dest: str, rules: Outbound) -> bool:
    """Whether a link destination, read as a browser would (entities and escapes decoded,
    blanks and invisible characters dropped), is ``https``, relative, or this GitHub's own."""
    plain = _BACKSLASHED.sub(r"\1", html.unescape(dest.removeprefix("<")))
    plain = "".join(c for c in plain if unicodedata.category(c)[0] not in "CZ")
    if rules.own_origin and _at_origin(plain, rules.own_origin):
        return True
    scheme = _SCHEME.match(plain)
    return scheme is None or scheme.group(1).lower() == "https"


def _at_origin(url: str, origin: str) -> bool:
    head = url[: len(origin) + 1].lower()
    return head == origin.lower() or head == origin.lower() + "/"


def _tag(found: re.Match[str], text: str) -> str:
    return "<" if _ALLOWED_TAG.match(text, found.start()) else "<" + MARK


def _bare(found: re.Match[str], text: str, rules: Outbound) -> str:
    start = found.start()
    if rules.own_origin and _at_origin(text[start : start + 400], rules.own_origin):
        return found.group()
    scheme = found.group()[:-2]
    return scheme + MARK + "//"


def _mention(found: re.Match[str], text: str, rules: Outbound) -> str:
    whole = found.group()
    login, team = found["login"], found["team"]
    if login and not team and login.casefold() in rules.mentions:
        return whole
    start = found.start()
    if start and text[start - 1] in _ASCII_ALNUM:
        # user@example.com and a marker's acme/widgets#7@sha are no mentions. After an
        # address's domain it can be one: GitHub links the address, and the @ that follows
        # then starts a text of its own.
        word = start
        while word and text[word - 1] in _ADDRESS_CHARS:
            word -= 1
        if not word or text[word - 1] != "@":
            return whole
    return "@" + MARK + whole[1:]


def _cut(text: str) -> str:
    """``text`` cut to :data:`MAX_BODY_CHARS`, its trailing hidden markers kept (the
    exactly-once writes find their own posts by them), a fence left open closed."""
    markers = text[_markers_start(text) :]
    tail = "\n\n" + markers if markers else ""
    head = text[: MAX_BODY_CHARS - len(tail) - len(CUT_NOTE)]
    for _ in range(2):
        closing = _closing(head)
        over = len(head) + len(closing) + len(CUT_NOTE) + len(tail) - MAX_BODY_CHARS
        if over <= 0:
            break
        head = head[:-over]
    return head + closing + CUT_NOTE + tail


def _markers_start(text: str, most: int = 8) -> int:
    """Where the hidden markers at the end of ``text`` begin (``len(text)``: none there)."""
    start = len(text)
    for _ in range(most):
        before = text[:start].rstrip()
        if not before.endswith("-->"):
            break
        opened = before.rfind("<!--", 0, len(before) - 3)
        if opened < 0 or "-->" in before[opened + 4 : len(before) - 3]:
            break
        start = opened
    return start if len(text) - start < 4_000 else len(text)


def _closing(head: str) -> str:
    """A line closing the fence ``head`` ends inside, or ""."""
    runs = list(_blocks(head))
    if not runs or not runs[-1][0]:
        return ""
    fence = _open_fence(runs[-1][1])
    return "\n" + fence if fence else ""


def _open_fence(code: str) -> str | None:
    """The fence that closes the code run ``code``, when its last line does not."""
    lines = code.rstrip("\n").split("\n")
    opened = _FENCE_OPEN.match(lines[0])
    if opened is None:
        return None
    fence = opened["fence"]
    closer = rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*"
    if len(lines) > 1 and re.fullmatch(closer, lines[-1]):
        return None
    return fence
