"""Blanking comments and literals of C++/CUDA source, keeping every offset and newline."""

import re

_TOKENS = re.compile(r"""
   (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
 | (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\(.*?\)(?P=delim)")
 | (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*(?:"|$))
 | (?P<char>(?<![\w'])'(?:\\.|[^'\\\n])*(?:'|$))
""", re.S | re.X | re.M)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def strip_code(source: str):
    """Return (code, no_comments): `code` has comments and string/char literal contents
    blanked; `no_comments` has only comments blanked (for #include "..." lines)."""
    code, no_comments, pos = [], [], 0
    for m in _TOKENS.finditer(source):
        code.append(source[pos:m.start()])
        no_comments.append(source[pos:m.start()])
        token = m.group(0)
        if m.group("comment") is not None:
            code.append(_blank(token))
            no_comments.append(_blank(token))
        else:
            quote = token.index('"') if '"' in token[:4] else token.index("'")
            code.append(token[:quote + 1] + _blank(token[quote + 1:-1]) + token[-1:])
            no_comments.append(token)
        pos = m.end()
    code.append(source[pos:])
    no_comments.append(source[pos:])
    return "".join(code), "".join(no_comments)
