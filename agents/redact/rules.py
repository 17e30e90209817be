"""The redaction rule table: what a secret looks like, and what replaces it.

Every rule replaces what it finds with ``[REDACTED:<kind>]``. Rules are ordered so that the
most specific ones (PEM blocks, JWTs, GitHub tokens) claim their text before the generic
``key=value`` and base64 rules look at it. :mod:`agents.redact` runs the table.

Where a secret may start matters as much as its shape: in JSON or ``repr`` text a token often
follows an escape (``\\nghs_...``, ``\\u00e9ghs_...``), where ``\\b`` sees no word boundary, and
in names it follows a word character (``my_ghs_...``). :data:`START` accepts all of those.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
_TOKEN_TAIL = r"[A-Za-z0-9_]+(?:[.\-]+[A-Za-z0-9_]+)*"
# Text wrapped at a fixed width carries a token's tail on the next lines (or after a "\n"). A
# continuation line is one run of token characters that fills its line. On one line, a space or a
# tab may split a token too: the next run of token characters is then a candidate piece.
_NEWLINE = r"(?:\r?\n|\\r\\n|\\n)"
# A piece cut anywhere may start or end with a dot or a dash of the token, and a piece may be
# nothing but dots and dashes ("--" of a base64url segment cut every two characters): such
# pieces, each with the spaces after it, lead the next run of token characters.
_RUN = r"(?:[.\-]+[ \t]{1,4})*[.\-]*[A-Za-z0-9_]+(?:[.\-]+[A-Za-z0-9_]+)*"
_LINE_RUN = rf"[ \t]*{_RUN}(?=\Z|[\r\n\"'`]|\\[nr])"
_WRAPPED = rf"(?P<cont>(?:[.\-]*(?:{_NEWLINE}{_LINE_RUN}|[ \t]{{1,4}}{_RUN}))*)"
_CONT_PIECE = re.compile(rf"(?P<sep>[.\-]*(?:{_NEWLINE}[ \t]*|[ \t]+))(?P<run>{_RUN})")
_WRAP_MIN = 12


_KNOWN_PREFIX = re.compile(r"(?i)^(?:github_pat_|gh[pousr]_(?:\d+_)?|sk-ant-(?:[a-z]+\d*-)?)")
# GitHub's newer installation tokens are ~520 characters with dots (the stateless ones are
# ``ghs_<app id>_<JWT>``); nothing says exactly how long, so this bounds what a split one takes.
_LONG_TOKEN_MAX = 600


def _full_length(token: str) -> int:
    """How long a token of this prefix is when whole (0: no fixed length known)."""
    lowered = token.lower()
    if lowered.startswith("github_pat_"):
        return len("github_pat_") + 82
    if lowered.startswith("sk-ant-"):
        return 108
    if not lowered.startswith("gh"):
        return 0
    if "." in lowered or re.match(r"gh[pousr]_\d+_eyj", lowered):
        return _LONG_TOKEN_MAX
    return len("ghs_") + 36


def _random_ish(run: str) -> bool:
    """A digit anywhere, or a capital after the first letter: not a word of prose."""
    return any(c.isdigit() for c in run) or any(c.isupper() for c in run[1:])


def _continues(token: str, piece: str, *, same_line: bool, random_tail: bool) -> bool:
    """Whether ``piece`` is the next part of a split ``token`` rather than text of its own.

    A random-looking run (8 characters or more, a capital after its first letter or a digit)
    continues any token: words that start a sentence do not look so. A token shorter than its
    kind's full length also takes the next line whatever it looks like. On the same line a token
    may be cut anywhere by spaces (every two characters, even), so a piece continues a token that
    still lacks it when what follows the token's prefix looks random (``random_tail``):
    ``ghs_short is a word`` keeps its words.
    """
    run = piece.strip(" \t.-")
    token = "".join(token.split())
    full = _full_length(token)
    looks_random = len(run) >= 8 and _random_ish(run)
    if same_line:
        fits = len(token) + len(run) <= full
        return bool(run) and (looks_random or (fits and (random_tail or _random_ish(run))))
    cut_short = _WRAP_MIN <= len(token) < full
    return bool(run) and (cut_short or looks_random)


def token_extent(m: re.Match[str]) -> int:
    """How much of a token rule's match is the token: its own characters and the pieces of it
    split onto the next lines or after spaces; what follows is text of its own. 0 for a bare
    prefix that no piece of a token follows (``ghp_ is the classic prefix``)."""
    cont = m.group("cont")
    token = m.group(0)[: len(m.group(0)) - len(cont)]
    pieces: list[re.Match[str]] = []
    for piece in _CONT_PIECE.finditer(cont):
        if piece.start() != (pieces[-1].end() if pieces else 0):
            break
        pieces.append(piece)
    # What follows the prefix, the pieces on its line joined: "n XT qP" reads as "nXTqP".
    ahead = "".join(p["run"] for p in pieces if not p["sep"].strip(" \t.-"))
    random_tail = _random_ish((_KNOWN_PREFIX.sub("", "".join(token.split())) + ahead)[:16])
    taken = 0
    for piece in pieces:
        same_line = not piece["sep"].strip(" \t.-")
        if not _continues(token, piece["run"], same_line=same_line, random_tail=random_tail):
            break
        token += piece["run"].strip(" \t")
        taken = piece.end()
    if not taken and not m.group("tail"):
        return 0
    return len(m.group(0)) - len(cont) + taken


def _token(kind: str, redact: Callable[[str], str]) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        whole = m.group(0)
        end = token_extent(m)
        if end == 0:
            prefix = len(whole) - len(m.group("cont"))
            return whole[:prefix] + redact(whole[prefix:])
        if end == len(whole):
            return mark(kind)
        return mark(kind) + redact(whole[end:])  # the text left may hold a secret of its own

    return replace


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


def rule_table(redact: Callable[[str], str]) -> tuple[Rule, ...]:
    """The rules in the order they run. ``redact`` is the whole redaction, for the one rule
    that hands the rest of a wrapped token's lines back to it (they may hold a secret too)."""
    return RULES_BEFORE_TOKENS + _token_rules(redact) + RULES_AFTER_TOKENS


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


_SPACED_PREFIX = (
    rf"{START}(?i:{_spaced('g', 'h', '[pousr]', '_')}"
    rf"|{_spaced(*'github', '_', *'pat', '_')}|{_spaced('s', 'k', '-', *'ant', '-')}){_GAP}"
    r"(?=[A-Za-z0-9_\-])"
)


def _split_prefix(kind: str, redact: Callable[[str], str]) -> Callable[[re.Match[str]], str]:
    whole_token = _token(kind, redact)

    def replace(m: re.Match[str]) -> str:
        # What follows the prefix, its pieces joined: "n XT qP" reads as "nXTqP".
        joined = "".join((m.group("tail") + m.group("cont")).split())
        if not _random_ish(joined[:8]):
            return m.group(0)
        return whole_token(m)

    return replace


def _token_rules(redact: Callable[[str], str]) -> tuple[Rule, ...]:
    return (
        Rule(
            "github-token",
            re.compile(
                # At a start, any length; glued to a word, only with a random-looking run after it.
                # A bare prefix split from its tail by a space is a candidate too (its pieces
                # decide, see token_extent).
                rf"{_GH_PREFIX}(?:{_started('(?i:gh[pousr]_)')}|{_started('(?i:github_pat_)')}"
                r"|(?=[A-Za-z0-9]{20}))"
                rf"(?P<tail>{_TOKEN_TAIL})?{_WRAPPED}"
            ),
            _token("github-token", redact),
            needs=("gh", "github_pat_"),
        ),
        Rule(
            "anthropic-key",
            re.compile(rf"(?i:sk-ant-)(?P<tail>[A-Za-z0-9_\-]+){_WRAPPED}"),
            _token("anthropic-key", redact),
            needs=("sk-ant-",),
        ),
        Rule(
            "github-token",
            re.compile(rf"(?=[gG]){_SPACED_PREFIX}(?P<tail>{_TOKEN_TAIL}){_WRAPPED}"),
            _split_prefix("github-token", redact),
            needs=("g",),
        ),
        Rule(
            "anthropic-key",
            re.compile(rf"(?=[sS]){_SPACED_PREFIX}(?P<tail>[A-Za-z0-9_\-]+){_WRAPPED}"),
            _split_prefix("anthropic-key", redact),
            needs=("s",),
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
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@\[\]]+:[^/\s@\[\]]+@"),
        lambda m: f"{m.group(1)}{mark('url-credentials')}@",
        needs=("@",),
    ),
    Rule(
        "magic-link",
        re.compile(rf"(?i)([?&#](?:{_URL_SECRET_PARAMS})=)(?!\[REDACTED:)[^&\s#\"'<>\]]+"),
        keep_group1("magic-link"),
        needs=("=",),
    ),
    Rule(
        "secret",
        re.compile(
            rf"(?i)(?P<head>(?P<kq>[\"']?)\b[\w.\-]*(?:{SECRET_KEY_WORDS})(?P=kq)[ \t]*[:=][ \t]*)"
            r"(?P<q>[\"'])(?!\[REDACTED:)(?P<v>[^\"'\n]+)(?P=q)"
        ),
        _quoted_value,
        needs=_SECRET_NEEDS,
    ),
    Rule(
        "secret",
        re.compile(
            rf"(?i)(?P<head>\b[\w.\-]*(?:{SECRET_KEY_WORDS})[ \t]*[:=][ \t]*)"
            # Skip code: dotted names, calls, subscripts and literals are not secret values.
            r"(?!\[REDACTED:)(?![A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b)"
            r"(?!(?:None|True|False|null|true|false)\b)"
            r"(?P<v>[A-Za-z0-9_\-.+/~=]+)(?![\w(\[.])"
        ),
        _unquoted_value,
        needs=_SECRET_NEEDS,
    ),
    Rule("base64", B64_RUN, _blob, min_len=B64_MIN),
)
