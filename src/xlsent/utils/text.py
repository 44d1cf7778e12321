"""The one rule for text that is not Unicode, wherever text enters, and messages that never fail to print.

A JSON string may hold a lone UTF-16 surrogate (``"\\ud800"``: valid JSON, not Unicode — an emoji cut in half by a
producer, a broken export). Python keeps it in a ``str``, but nothing can encode it as UTF-8: a tokenizer, pyarrow
or a JSON response would fail on it far from where it came in. Every reader, API function and route checks its
texts with :func:`find_unencodable` (strict UTF-8 decoding of a file already refuses such bytes) and reports the
place with :func:`describe`; a message that shows a user's value shows it through :func:`shown` (``ascii()``
escapes, cut), so that building, encoding or printing the message cannot fail.
"""

from __future__ import annotations

from typing import Any

#: what to do about a text that is not Unicode (the end of every such error)
FIX = "remove or replace it (a lone surrogate is what a producer leaves when it cuts an emoji in half)"


def bad_char(text: str) -> int | None:
    """The index of the first character of ``text`` that UTF-8 cannot encode (a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return None


def find_unencodable(value: Any, where: str = "") -> tuple[str, int, str] | None:
    """The first string inside ``value`` (a string, or lists, tuples and dicts of them — dict keys too) that is not
    Unicode: ``(where, index, character)``, ``where`` naming it inside ``value`` (``sections[2].text``, ``[3]``, or
    ``where`` itself for ``value``); None when every string is clean."""
    stack = [(value, where)]
    while stack:  # no recursion: a deeply nested value is not a reason to fail
        item, at = stack.pop()
        if isinstance(item, str):
            i = bad_char(item)
            if i is not None:
                return at, i, item[i]
        elif isinstance(item, dict):
            entries = []
            for k, v in item.items():
                label = _label(k)
                if isinstance(k, str) and (i := bad_char(k)) is not None:
                    return (f"{at}." if at else "") + label, i, k[i]  # the key itself
                entries.append((v, f"{at}.{label}" if at else label))
            stack.extend(reversed(entries))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed([(v, f"{at}[{j}]") for j, v in enumerate(item)]))
    return None


def _label(key: Any) -> str:
    text = ascii(key)[1:-1] if isinstance(key, str) else ascii(key)
    return text if len(text) <= 40 else text[:40] + "..."


def describe(where: str, index: int, char: str) -> str:
    """``a lone surrogate U+D800 at character 5 of 'src'`` (``where`` empty: without ``of …``)."""
    kind = "a lone surrogate" if 0xD800 <= ord(char) <= 0xDFFF else "a character UTF-8 cannot encode"
    return f"{kind} U+{ord(char):04X} at character {index + 1}" + (f" of '{where}'" if where else "")


def unencodable_problem(value: Any, where: str = "") -> str | None:
    """``text that is not Unicode (a lone surrogate U+D800 at character 5 of 'src')``, or None when clean."""
    found = find_unencodable(value, where)
    return None if found is None else f"text that is not Unicode ({describe(*found)})"


def shown(value: Any, limit: int = 60) -> str:
    """``value`` as a message may show it: ``ascii()`` escapes (always encodable and printable), cut to about
    ``limit`` characters."""
    try:
        text = ascii(value)
    except Exception:  # a value whose repr fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."
