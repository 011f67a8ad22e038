"""Markdown to safe HTML for the panel, and query words marked in search snippets.

Notes are written by agents and strangers: raw HTML in them is shown as text (markdown-it-py with
``html`` off), and a link or image may only point at http(s), mailto or a place in this panel.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

_SAFE_LINK = re.compile(r"^(https?:|mailto:|#|/(?!/)|[^:/?#]+(?:[/?#]|$))", re.IGNORECASE)
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]{1,200})(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]{1,200}))?\]\]")
_TAG_SPLIT = re.compile(r"(<[^>]*>)")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _validate(url: str) -> bool:
    return bool(_SAFE_LINK.match(url.strip()))


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")
    md.validateLink = _validate  # type: ignore[method-assign]
    return md


_MD = _parser()


def note_link(title: str) -> str:
    return "/go/" + quote(title.strip(), safe="")


def markdown(text: str, first_line: int = 1) -> Markup:
    """``text`` as HTML; each block gets ``id="L<n>"`` (``n`` its line in the file, counting from
    ``first_line``) and ``data-lines`` for the hit links of search; ``[[Title]]`` links to the note."""
    tokens = _MD.parse(text)
    taken: set[int] = set()
    for token in reversed(tokens):  # the innermost block of a line takes its id (a list item, not the list)
        if token.map and token.nesting == 1:
            start, end = token.map[0] + first_line, token.map[1] + first_line - 1
            token.attrSet("data-lines", f"{start}-{end}")
            if start not in taken:
                taken.add(start)
                token.attrSet("id", f"L{start}")
    html = _MD.renderer.render(tokens, _MD.options, {})
    return Markup(_wikilinks(html))


def _wikilinks(html: str) -> str:
    """``[[Title]]`` in the rendered text (never inside a tag) as a link to that note."""
    parts = _TAG_SPLIT.split(html)
    for i, part in enumerate(parts):
        if i % 2 == 0 and "[[" in part:
            parts[i] = _WIKILINK.sub(_wikilink, part)
    return "".join(parts)


def _wikilink(match: re.Match[str]) -> str:
    from html import unescape

    title = unescape(match.group(1))
    shown = match.group(2) or match.group(1)  # already escaped by the renderer
    return f'<a class="wikilink" href="{escape(note_link(title))}">{shown}</a>'


def query_words(query: str) -> list[str]:
    """What to mark of a query: its words, and each two-character piece of a Chinese run (the
    index matches Chinese by such pairs, so a hit may hold the pairs but not the whole run)."""
    words: list[str] = []
    for word in _WORD.findall(query):
        for run in _CJK_RUN.findall(word):
            words += [run] + [run[i : i + 2] for i in range(len(run) - 1)] if len(run) > 1 else [run]
        rest = _CJK_RUN.sub(" ", word).split()
        words += [w for w in rest if len(w) > 1 or not w.isascii()]
    return sorted(set(words), key=len, reverse=True)


def highlight(text: str, query: str) -> Markup:
    """``text`` escaped, with the query's words in ``<mark>`` (ASCII words match case-insensitively,
    and as the start of a longer word: a search for ``run`` finds ``running``)."""
    words = query_words(query)
    if not words:
        return Markup(escape(text))
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(str(escape(text[last : m.start()])))
        out.append(f"<mark>{escape(m.group(0))}</mark>")
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def first_body_line(text: str, body: str) -> int:
    """The file line (1-based) on which ``body`` starts within the note's whole ``text``."""
    at = text.rfind(body) if body else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else 1
