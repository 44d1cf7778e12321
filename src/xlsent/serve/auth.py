"""API keys for ``xlsent serve``: where they come from, how a request's key is checked, and when a server may run
without them.

Keys come from ``--api-key-file FILE`` (one key a line; blank lines skipped) and ``XLSENT_API_KEYS``
(comma-separated); both together give the union. With keys set, a request carries ``Authorization: Bearer KEY``
(what the ``openai`` client sends for ``api_key=``, and what Prometheus' ``authorization`` setting sends).

A presented key is hashed with SHA-256 and compared with the digest of every configured key by
:func:`hmac.compare_digest`, all of them every time: the time a check takes does not depend on where, or
whether, the presented key matches, nor on the keys' lengths. A key is never logged, never echoed in an error,
and :meth:`ApiKeys.check` reports only why a request was refused (``missing``, ``malformed``, ``wrong``),
which is what ``/metrics`` counts.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
from pathlib import Path

from xlsent.utils.errors import XlsentError, named

ENV = "XLSENT_API_KEYS"
REASONS = ("missing", "malformed", "wrong")


def _digest(key: str | bytes) -> bytes:
    return hashlib.sha256(key.encode("utf-8") if isinstance(key, str) else key).digest()


def _valid(key: str) -> bool:
    """A key must travel in an HTTP header unchanged: printable ASCII, no spaces."""
    return bool(key) and all(33 <= ord(c) <= 126 for c in key)


class ApiKeys:
    """The configured keys, kept only as SHA-256 digests."""

    def __init__(self, keys: list[str]) -> None:
        if not keys:
            raise XlsentError("no API keys given")
        self._digests = [_digest(k) for k in keys]

    def __len__(self) -> int:
        return len(self._digests)

    @classmethod
    def load(cls, api_key_file: str | None = None, env: str | None = None) -> "ApiKeys | None":
        """Keys from ``api_key_file`` and from ``env`` (default: the ``XLSENT_API_KEYS`` variable); None if neither has any.

        A bad key is named by its place (file and line, or position in the variable), never by its text."""
        keys: list[str] = []
        file = api_key_file
        if file is not None:
            path = Path(file)
            if not path.is_file():
                raise XlsentError(f"{named('api_key_file', file)}: no such file")
            try:
                lines = path.read_text(encoding="utf-8-sig").splitlines()  # a BOM is not part of the first key
            except UnicodeDecodeError:
                raise XlsentError(f"{named('api_key_file', file)}: not UTF-8 text; write one key a line") from None
            for n, line in enumerate(lines, 1):
                key = line.strip()
                if not key:
                    continue
                if not _valid(key):
                    raise XlsentError(f"{file}:{n}: a key must be printable ASCII without spaces (it travels in the "
                                      "Authorization header); fix or remove that line")
                keys.append(key)
            if not keys:
                raise XlsentError(f"{named('api_key_file', file)}: no keys in it; write one key a line")
        env = os.environ.get(ENV) if env is None else env
        if env and env.strip():
            for n, key in enumerate((k.strip() for k in env.split(",")), 1):
                if not key:
                    continue
                if not _valid(key):
                    raise XlsentError(f"{ENV}: key {n} must be printable ASCII without spaces; keys are comma-separated")
                keys.append(key)
        return cls(keys) if keys else None

    def check(self, authorization: bytes | str | None) -> str | None:
        """None when the ``Authorization`` header value carries a configured key; otherwise why not."""
        if authorization is None:
            return "missing"
        if isinstance(authorization, str):
            authorization = authorization.encode("latin-1", "replace")
        scheme, _, token = authorization.strip().partition(b" ")
        token = token.strip()
        if scheme.lower() != b"bearer" or not token:
            return "malformed"
        presented = _digest(token)
        match = False
        for d in self._digests:  # every key, every time: no early exit
            match |= hmac.compare_digest(presented, d)
        return None if match else "wrong"


def is_loopback(host: str) -> bool:
    """True when ``host`` is reachable from this machine only (127.0.0.0/8, ::1, ``localhost``).

    Any other name counts as not loopback: a name resolves differently tomorrow."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, keys: ApiKeys | None, allow_unauthenticated: bool) -> None:
    """Refuse to listen beyond this machine with no key, unless told to."""
    if keys is None and not allow_unauthenticated and not is_loopback(host):
        raise XlsentError(f"--host {host}: anyone who reaches this port could use the service; give keys "
                          f"(--api-key-file FILE or {ENV}=KEY1,KEY2) or pass --allow-unauthenticated")
