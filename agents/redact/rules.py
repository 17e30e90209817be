"""The redaction rule table: what a secret looks like, and what replaces it.

Every rule replaces what it finds with ``[REDACTED:<kind>]``. Rules are ordered so that the
most specific ones (PEM blocks, JWTs, GitHub tokens) claim their text before the generic
``key=value`` and base64 rules look at it. :mod:`agents.redact` runs the table.

Where a secret may start matters as much as its shape: in JSON or ``repr`` text a token often
follows an escape (``\\nghs_...``, ``\\u00e9ghs_...``), where ``\\b`` sees no word boundary, and
in names it follows a word character (``my_ghs_...``). :data:`START` accepts all of those.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agents.redact.encoded import B64_MIN, B64_RUN, decoded_text, looks_like_blob

MARK_PREFIX = "[REDACTED:"


def mark(kind: str) -> str:
    return f"{MARK_PREFIX}{kind}]"


# Names whose *value* is a secret wherever they appear as a key (JSON, YAML, query, env).
# A key matches when it ends with one of these words, so ``input_tokens`` or
# ``token_fingerprint`` stay readable while ``GITHUB_TOKEN`` or ``client_secret`` do not.
SECRET_KEY_WORDS = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|private[_-]?key"
    r"|access[_-]?key|secret[_-]?key|credentials?|authorization|cookie|session[_-]?id"
    r"|client[_-]?secret|signature|sealing[_-]?key|signing[_-]?key|encryption[_-]?key"
    r"|master[_-]?key|fernet[_-]?key"
)
SECRET_KEY_RE = re.compile(rf"(?i)^(?:.*[_\-.])?(?:{SECRET_KEY_WORDS})$")
# A key's word ends right before its separator: an optional closing quote, blanks, ``:`` or ``=``.
_KEY_WORD_BEFORE = re.compile(rf"(?i)(?:{SECRET_KEY_WORDS})\Z")
_KEY_SEPARATOR = re.compile(r"[:=]")
# Longer than the longest word above ("encryption-key", 14): where a word before a separator may
# start.
_KEY_WORD_MAX = 24

# Not inside a longer alphanumeric word, or right after a JSON/repr escape that ends in a letter.
START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbfv0])|(?<=\\u[0-9A-Fa-f]{4})|(?<=\\x[0-9A-Fa-f]{2}))"


def _started(literal: str) -> str:
    """Checked after matching ``literal`` (fixed width), so the regex engine can scan for it."""
    return rf"(?<={START}{literal})"


@dataclass(frozen=True)
class Rule:
    """One kind of secret: a pattern, how to rewrite a match, and a cheap pre-check.

    ``needs`` lists lowercase substrings of which at least one must occur for the pattern to
    possibly match; most text contains none, and skipping the regex keeps redaction cheap
    enough to run on every stored event. A rule without ``needs`` runs on text of at least
    ``min_len`` characters.
    """

    kind: str
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    needs: tuple[str, ...] = ()
    min_len: int = 0
    # For a token rule: where the token a match starts ends in the text (its pieces split over
    # lines and blanks taken one by one); ``m.start()`` when the match is no token after all.
    end: Callable[[str, re.Match[str]], int] | None = None
    # The pattern's matches, as ``finditer`` gives them, found a cheaper way (see keyed_matches).
    matches: Callable[[re.Pattern[str], str], Iterator[re.Match[str]]] | None = None

    def apply(self, text: str) -> str:
        """``text`` with every match of this rule replaced."""
        if self.end is None and self.matches is not None:
            return _substituted(text, self.matches(self.pattern, text), self.replace)
        if self.end is None:
            return self.pattern.sub(self.replace, text)
        out: list[str] = []
        done = at = 0
        # Not re.sub: a token's end is decided piece by piece after its match, and the search
        # goes on right after the token, so what follows it is searched like any other text.
        while (m := self.pattern.search(text, at)) is not None:
            end = self.end(text, m)
            if end <= m.start():
                at = max(m.end(), m.start() + 1)
                continue
            out += [text[done : m.start()], mark(self.kind)]
            done = at = end
        if not out:
            return text
        out.append(text[done:])
        return "".join(out)


def _substituted(
    text: str, matches: Iterator[re.Match[str]], replace: Callable[[re.Match[str]], str]
) -> str:
    out: list[str] = []
    done = 0
    for m in matches:
        out += [text[done : m.start()], replace(m)]
        done = m.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def keyed_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The matches ``pattern.finditer(text)`` gives for a pattern that starts at a key's word
    and runs through its separator (``token: ...``), found from the separators instead.

    The pattern itself opens with an alternation of two dozen words under ``(?i)``, which the
    regex engine tries at every position of the text: on 64 KB of ``a.a.a...`` after one key word
    that cost about as much as all other rules together. A ``:`` or ``=`` is looked for instead
    (a scan in C), a word before it in the few characters that precede its blanks and quote, and
    the pattern runs from that word only. The matches are the ones ``finditer`` finds: a word,
    its quote and its blanks hold no separator, so the matches in order of their separators are
    the matches in order of their starts, and what is read back from a separator never reaches
    past the one before it (each character is read back once, however many separators follow).
    """
    done = after_last = 0
    for separator in _KEY_SEPARATOR.finditer(text):
        at = separator.start()
        start, after_last = max(done, after_last), at + 1
        if at < done:
            continue  # inside the value of the previous match
        end = start + len(text[start:at].rstrip(" \t"))
        if end > start and text[end - 1] in "\"'":
            end -= 1
        word = _KEY_WORD_BEFORE.search(text, max(start, end - _KEY_WORD_MAX), end)
        if word is None:
            continue
        m = pattern.match(text, word.start())
        if m is not None:
            yield m
            done = m.end()


def whole(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda _m: mark(kind)


def keep_group1(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + mark(kind)


def _quoted_value(m: re.Match[str]) -> str:
    return f"{m.group('head')}{m.group('q')}{mark('secret')}{m.group('q')}"


def _unquoted_value(m: re.Match[str]) -> str:
    return f"{m.group('head')}{mark('secret')}"


def _blob(m: re.Match[str]) -> str:
    return mark("base64") if looks_like_blob(m.group(0)) else m.group(0)


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


def _url_credentials(m: re.Match[str]) -> str:
    """``scheme://[REDACTED]@`` when a scheme (a letter that starts a word, then letters,
    digits, ``+``, ``.``, ``-``) ends at the match; the walk back stops at the first character
    no scheme holds, so it covers each character once however many matches there are."""
    text, at = m.string, m.start()
    start = at
    while start and text[start - 1] in _SCHEME_CHARS:
        start -= 1
    scheme = any(
        text[i].isalpha() and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        for i in range(start, at)
    )
    return f"://{mark('url-credentials')}@" if scheme else m.group(0)


def _basic(m: re.Match[str]) -> str:
    value = m.group(2)
    exact = m.group(1).startswith("Basic") and any(c.isdigit() or c == "=" for c in value)
    decoded = decoded_text(value)
    # Prose ("basic understanding") never decodes to "user:password".
    if exact or (decoded is not None and ":" in decoded):
        return m.group(1) + mark("basic-auth")
    return m.group(0)


# Any case: GitHub writes its prefixes in lower case, but a reader takes ``GHP_...`` for the token
# all the same (and a model asked to shout will write it so).
_GH_PREFIX = r"(?i:gh[pousr]_|github_pat_)"
# Dots and dashes inside (base64url segments of a stateless token may hold "--").
_TOKEN_TAIL = r"[A-Za-z0-9_]++(?:[.\-]++[A-Za-z0-9_]++)*+"
# Text wrapped at a fixed width carries a token's tail on the next lines (or after a "\n"). A
# continuation line is one run of token characters that fills its line. On one line, a space or a
# tab may split a token too: the next run of token characters is then a candidate piece.
_NEWLINE = r"(?:\r?\n|\\r\\n|\\n)"
# A piece cut anywhere may start or end with a dot or a dash of the token, and a piece may be
# nothing but dots and dashes ("--" of a base64url segment cut every two characters): such
# pieces, each with the spaces after it, lead the next run of token characters. Possessive
# quantifiers: each character class meets only other classes, so giving characters back could
# never make a match, and not trying keeps the scan linear on hostile runs ("- - - -").
_RUN = r"(?:[.\-]++[ \t]{1,4}+)*+[.\-]*+[A-Za-z0-9_]++(?:[.\-]++[A-Za-z0-9_]++)*+"
# One piece after a token: its separator (a line break, or one to four blanks) and its run; a
# piece on a line of its own must fill that line. Pieces are read one at a time by
# :func:`token_end`, which stops at the first that is text of its own: a regex repetition over
# all of them would run on to the end of every run of words after every token prefix.
_PIECE = re.compile(
    rf"(?P<sep>[.\-]*+(?:(?P<nl>{_NEWLINE})[ \t]*+|[ \t]{{1,4}}+))(?P<run>{_RUN})"
    r"(?(nl)(?=\Z|[\r\n\"'`]|\\[nr]))"
)
_WRAP_MIN = 12
# The pieces looked at to tell whether what follows a prefix looks random (its first 16
# characters, see token_end): bounded, so a prefix followed by many lines costs no more.
_AHEAD_PIECES = 32


_KNOWN_PREFIX = re.compile(r"(?i)^(?:github_pat_|gh[pousr]_(?:\d+_)?|sk-ant-(?:[a-z]+\d*-)?)")
# GitHub's newer installation tokens are ~520 characters with dots (the stateless ones are
# ``ghs_<app id>_<JWT>``); nothing says exactly how long, so this bounds what a split one takes.
_LONG_TOKEN_MAX = 600
_STATELESS = re.compile(r"gh[pousr]_\d{1,20}_eyj")


# Cached: a hostile run repeats one prefix thousands of times, and a real token asks once.
@functools.lru_cache(maxsize=256)
def _full_length(token: str) -> int:
    """How long a token of this prefix is when whole (0: no fixed length known). Only the
    token's start and whether it holds a dot matter, so callers may pass a short stand-in."""
    lowered = token.lower()
    if lowered.startswith("github_pat_"):
        return len("github_pat_") + 82
    if lowered.startswith("sk-ant-"):
        return 108
    if not lowered.startswith("gh"):
        return 0
    if "." in lowered or _STATELESS.match(lowered):
        return _LONG_TOKEN_MAX
    return len("ghs_") + 36


_ASCII_RANDOM_ISH = re.compile(r"[0-9]|(?<=.)[A-Z]", re.DOTALL)


def _random_ish(run: str) -> bool:
    """A digit anywhere, or a capital after the first letter: not a word of prose."""
    # One search in C for the token characters every caller passes (ASCII); str methods, which
    # know every script's digits and capitals, for anything else. This is asked several times
    # for every token prefix in the text.
    if run.isascii():
        return _ASCII_RANDOM_ISH.search(run) is not None
    return any(map(str.isdigit, run)) or any(map(str.isupper, run[1:]))


@dataclass(slots=True)
class _Split:
    """A token as its pieces are taken: its length and what decides its full length (its first
    characters, whether a dot was seen), kept so each piece costs its own length only."""

    start: str
    length: int
    dotted: bool
    # The full length the start and the dot decide: worked out when first asked (most prefixes
    # in a hostile run never ask) and again only after they change.
    _full: int = -1

    @classmethod
    def of(cls, joined: str) -> _Split:
        """The token of a head, its blanks taken out (``joined``)."""
        return cls(joined[:40], len(joined), "." in joined)

    def add(self, run: str) -> None:
        joined = "".join(run.split())
        self.length += len(joined)
        dotted = self.dotted or "." in joined
        if len(self.start) < 40 or dotted != self.dotted:
            self.start = (self.start + joined)[:40]
            self.dotted = dotted
            self._full = -1

    @property
    def full(self) -> int:
        if self._full < 0:
            self._full = _full_length(self.start + ("." if self.dotted else ""))
        return self._full


def _continues(
    token: _Split, piece: str, *, same_line: bool, random_tail: Callable[[], bool]
) -> bool:
    """Whether ``piece`` is the next part of a split ``token`` rather than text of its own.

    A random-looking run (8 characters or more, a capital after its first letter or a digit)
    continues any token: words that start a sentence do not look so. A token shorter than its
    kind's full length also takes the next line whatever it looks like. On the same line a token
    may be cut anywhere by spaces (every two characters, even), so a piece continues a token that
    still lacks it when what follows the token's prefix looks random (``random_tail``):
    ``ghs_short is a word`` keeps its words. ``random_tail`` is asked only when it decides:
    finding it reads the pieces ahead.
    """
    run = piece.strip(" \t.-")
    if not run:
        return False
    random_run = _random_ish(run)
    if len(run) >= 8 and random_run:
        return True
    if same_line:
        return token.length + len(run) <= token.full and (random_run or random_tail())
    return _WRAP_MIN <= token.length < token.full


class _Pieces:
    """The pieces after a token's head, read from the text one at a time as they are needed."""

    __slots__ = ("_joined", "_next", "_random", "_read", "_text")

    def __init__(self, text: str, at: int, joined: str, first: re.Match[str] | None = None) -> None:
        """Pieces from ``at`` in ``text``, after a head that is ``joined`` without its blanks
        (and starts with ``first`` when that was read already)."""
        self._text = text
        self._joined = joined
        self._next = at if first is None else first.end()
        self._read: list[re.Match[str]] = [] if first is None else [first]
        self._random: bool | None = None

    def tail_looks_random(self) -> bool:
        """Whether what follows the prefix looks random: its first 16 characters, the pieces on
        its line joined ("n XT qP" reads as "nXTqP"). Read once for a token however many of its
        pieces ask, in one loop: this is asked for every prefix of a hostile run of them."""
        if self._random is None:
            joined = self._joined
            known = _KNOWN_PREFIX.match(joined)
            ahead = joined[known.end() :] if known else joined
            index = 0
            while len(ahead) < 16 and index < _AHEAD_PIECES:
                piece = self.get(index)
                if piece is None:
                    break
                if piece["nl"] is None:
                    ahead += piece["run"]
                index += 1
            self._random = _random_ish(ahead[:16])
        return self._random

    def get(self, index: int) -> re.Match[str] | None:
        while len(self._read) <= index:
            piece = _PIECE.match(self._text, self._next)
            if piece is None:
                return None
            self._read.append(piece)
            self._next = piece.end()
        return self._read[index]


def token_end(text: str, m: re.Match[str]) -> int:
    """Where the token found by a token rule's match ``m`` ends in ``text``: its own characters
    and the pieces of it split onto the next lines or after spaces; what follows is text of its
    own. ``m.start()`` for a bare prefix that no piece of a token follows (``ghp_ is the
    classic prefix``)."""
    end = m.end()
    first = _PIECE.match(text, end)
    if first is None:  # no piece after it: no token to build, nothing to read ahead
        return end if m.group("tail") else m.start()
    joined = "".join(m.group(0).split())
    pieces = _Pieces(text, end, joined, first)
    token = _Split.of(joined)
    random_tail = pieces.tail_looks_random
    index = 0
    while (piece := pieces.get(index)) is not None:
        same_line = piece["nl"] is None
        if not _continues(token, piece["run"], same_line=same_line, random_tail=random_tail):
            break
        token.add(piece["run"].strip(" \t"))
        end = piece.end()
        index += 1
    if end == m.end() and not m.group("tail"):
        return m.start()
    return end


def _split_prefix_end(text: str, m: re.Match[str]) -> int:
    """:func:`token_end` for a prefix split by a blank ("gh p_..."), taken only when what
    follows it looks random: prose that spells a prefix so goes on with words."""
    joined = "".join(m.group("tail").split())
    pieces = _Pieces(text, m.end(), "".join(m.group(0).split()))
    index = 0
    while len(joined) < 8 and (piece := pieces.get(index)) is not None:
        joined += "".join(piece.group(0).split())
        index += 1
    if not _random_ish(joined[:8]):
        return m.start()
    return token_end(text, m)


_URL_SECRET_PARAMS = (
    r"token|access_token|id_token|refresh_token|code|signature|sig|key|api_key|auth|otp"
    r"|magic|login_token|session|password|secret|X-Amz-Signature|X-Amz-Credential"
)

_HEADER_NEEDS = ("authorization", "cookie", "x-api-key", "x-github-token")
_SECRET_NEEDS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "authorization",
    "cookie",
    "session",
    "signature",
)


RULES_BEFORE_TOKENS: tuple[Rule, ...] = (
    Rule(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
            r"|[A-Za-z0-9+/=\s\\n]*)",
            re.DOTALL,
        ),
        whole("private-key"),
        needs=("private key",),
    ),
    Rule(
        "jwt",
        re.compile(rf"eyJ{_started('eyJ')}[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*"),
        whole("jwt"),
        needs=("eyj",),
    ),
)


# A prefix split by a space, a tab or a line break between two of its characters ("gith ub_pat_",
# "sk- ant-"). Only when what follows it looks random (see _random_ish): prose that spells a
# prefix so goes on with words.
_GAP = r"(?:[ \t]|\r?\n)?"


def _spaced(*atoms: str) -> str:
    return _GAP.join(atoms)


def _spaced_prefix(first: str, *rests: tuple[str, ...]) -> str:
    """Prefixes that start with the characters of ``first`` (a class such as ``[gG]``), then
    each of ``rests``, a gap allowed between any two characters. The class comes first and
    where it may start is checked after it: a pattern that opens with a class lets the regex
    engine skip to the next such character in C, where one that opens with a lookaround is
    tried at every position of the text (every text holds a ``g`` or an ``s``, so these run on
    nearly everything redacted)."""
    alternatives = "|".join(_GAP + _spaced(*rest) for rest in rests)
    return rf"{first}{_started(first)}(?i:{alternatives}){_GAP}(?=[A-Za-z0-9_\-])"


_TOKEN_RULES: tuple[Rule, ...] = (
    Rule(
        "github-token",
        re.compile(
            # At a start, any length; glued to a word, only with a random-looking run after it.
            # A bare prefix split from its tail by a space is a candidate too (its pieces
            # decide, see token_end).
            rf"{_GH_PREFIX}(?:{_started('(?i:gh[pousr]_)')}|{_started('(?i:github_pat_)')}"
            r"|(?=[A-Za-z0-9]{20}))"
            rf"(?P<tail>{_TOKEN_TAIL})?"
        ),
        whole("github-token"),
        needs=("gh", "github_pat_"),
        end=token_end,
    ),
    Rule(
        "anthropic-key",
        re.compile(r"(?i:sk-ant-)(?P<tail>[A-Za-z0-9_\-]++)"),
        whole("anthropic-key"),
        needs=("sk-ant-",),
        end=token_end,
    ),
    Rule(
        "github-token",
        re.compile(
            _spaced_prefix("[gG]", ("h", "[pousr]", "_"), (*"ithub", "_", *"pat", "_"))
            + rf"(?P<tail>{_TOKEN_TAIL})"
        ),
        whole("github-token"),
        needs=("g",),
        end=_split_prefix_end,
    ),
    Rule(
        "anthropic-key",
        re.compile(_spaced_prefix("[sS]", ("k", "-", *"ant", "-")) + r"(?P<tail>[A-Za-z0-9_\-]++)"),
        whole("anthropic-key"),
        needs=("s",),
        end=_split_prefix_end,
    ),
)


RULES_AFTER_TOKENS: tuple[Rule, ...] = (
    Rule(
        "api-key",
        re.compile(rf"sk-{_started('sk-')}(?:proj-)?[A-Za-z0-9_\-]{{20,}}"),
        whole("api-key"),
        needs=("sk-",),
    ),
    Rule(
        "header",
        re.compile(
            r"(?im)^([ \t]*(?:Authorization|Proxy-Authorization|Cookie|Set-Cookie|X-Api-Key"
            r"|X-GitHub-Token)[ \t]*:[ \t]*)(?!\[REDACTED:)\S.*$"
        ),
        keep_group1("header"),
        needs=_HEADER_NEEDS,
    ),
    Rule(
        "header",
        # Mid-line forms (curl -H "...", dict reprs): the scheme word is kept, the credential goes.
        re.compile(
            rf"(?i){START}((?:Proxy-)?Authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?:(?:Bearer|Basic|token|Digest)[ \t]+)?)(?!\[REDACTED:)[^\s\"',;]+"
        ),
        keep_group1("header"),
        needs=_HEADER_NEEDS,
    ),
    Rule(
        "bearer",
        re.compile(rf"(?i){START}(Bearer[ \t]+)(?!\[REDACTED:)[A-Za-z0-9\-._~+/]{{8,}}=*"),
        keep_group1("bearer"),
        needs=("bearer",),
    ),
    Rule(
        "basic-auth",
        re.compile(rf"(?i){START}(Basic[ \t]+)(?!\[REDACTED:)([A-Za-z0-9+/]{{8,}}=*)"),
        _basic,
        needs=("basic",),
    ),
    Rule(
        "url-credentials",
        # From the "://" on: a scheme before it is looked for by _url_credentials, walking back.
        # A pattern that starts at the scheme tries every start in a run such as "a.a.a...".
        re.compile(r"://[^/\s:@\[\]]++:[^/\s@\[\]]+@"),
        _url_credentials,
        needs=("@",),
    ),
    Rule(
        "magic-link",
        re.compile(rf"(?i)([?&#](?:{_URL_SECRET_PARAMS})=)(?!\[REDACTED:)[^&\s#\"'<>\]]+"),
        keep_group1("magic-link"),
        needs=("=",),
    ),
    # A key ends with one of the words; what comes before the word is kept as it is, so the
    # pattern starts at the word itself. Starting it at the key's first character instead
    # ("\b[\w.\-]*" before the word) tried every split of a run such as "a.a.a.a...": quadratic
    # time on attacker text. The key's closing quote need not match an opening one.
    Rule(
        "secret",
        re.compile(
            rf"(?i)(?P<head>(?:{SECRET_KEY_WORDS})[\"']?[ \t]*+[:=][ \t]*+)"
            r"(?P<q>[\"'])(?!\[REDACTED:)(?P<v>[^\"'\n]++)(?P=q)"
        ),
        _quoted_value,
        needs=_SECRET_NEEDS,
        matches=keyed_matches,
    ),
    Rule(
        "secret",
        re.compile(
            rf"(?i)(?P<head>(?:{SECRET_KEY_WORDS})[ \t]*+[:=][ \t]*+)"
            # Skip code: dotted names, calls, subscripts and literals are not secret values.
            r"(?!\[REDACTED:)(?![A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b)"
            r"(?!(?:None|True|False|null|true|false)\b)"
            r"(?P<v>[A-Za-z0-9_\-.+/~=]+)(?![\w(\[.])"
        ),
        _unquoted_value,
        needs=_SECRET_NEEDS,
        matches=keyed_matches,
    ),
    Rule("base64", B64_RUN, _blob, min_len=B64_MIN),
)

# The rules in the order they run.
RULES: tuple[Rule, ...] = RULES_BEFORE_TOKENS + _TOKEN_RULES + RULES_AFTER_TOKENS
