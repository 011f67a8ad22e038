"""Parse and edit notes as text, keeping every byte we did not mean to change.

The file is the truth and a person may have written it by hand, so nothing here re-renders a
whole note: edits splice freshly dumped lines into the original text and leave the rest
byte-identical (unknown keys, their order, comments, quoting, CRLF, a missing final newline, a BOM).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import Composer

from cairn.errors import DamagedNote, InvalidInput
from cairn.models import Observation, Relation
from cairn.observation_line import OBSERVATION, is_category

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_BOM = "\ufeff"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _without_timestamps(cls: Any) -> Any:
    # Times must stay the strings we read, or a round trip would rewrite "+08:00" values.
    cls.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
        for first, resolvers in cls.yaml_implicit_resolvers.items()
    }
    return cls


# Bounds on front matter read from a file a stranger may have written. A note's front matter is a
# few hundred bytes; these only stop what would stall every later command or exhaust memory.
MAX_FRONTMATTER_CHARS = 65_536
MAX_FRONTMATTER_DEPTH = 16
_MAX_EXPANDED = 4 * MAX_FRONTMATTER_CHARS  # characters plus items, every alias written out


@_without_timestamps
class _Loader(Composer, _BaseLoader):
    """libyaml's parser under PyYAML's own composer, which checks each node as it is built.

    An alias bomb (nine lines of ``b: &b [*a, *a, ...]`` stand for 387 million items) builds in a
    millisecond as shared lists; whatever then walks the result (the index's JSON) explodes. So
    the size of every node with its aliases written out is counted here, before anything is
    constructed, along with the nesting depth and aliases that point into their own value.
    PyYAML's composer over libyaml's events is also faster than libyaml's own composer.
    """

    def __init__(self, stream: str) -> None:
        _BaseLoader.__init__(self, stream)
        Composer.__init__(self)
        self._sizes: dict[int, int] = {}  # id(node) -> size written out, once the node is complete
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            node = Composer.compose_node(self, parent, index)  # raises on an undefined alias
            if id(node) not in self._sizes:
                raise _shape_error(event, f"alias *{event.anchor} points into its own value")
            return node
        opens = isinstance(event, yaml.CollectionStartEvent)  # the root mapping is level 1
        self._depth += opens
        if self._depth > MAX_FRONTMATTER_DEPTH:
            raise _shape_error(event, f"lists and maps nest more than {MAX_FRONTMATTER_DEPTH} levels deep")
        node = Composer.compose_node(self, parent, index)
        self._depth -= opens
        if isinstance(node, yaml.ScalarNode):
            size = len(node.value) + 1
        else:
            children = (
                node.value if isinstance(node, yaml.SequenceNode) else [n for kv in node.value for n in kv]
            )
            size = 1 + sum(self._sizes[id(child)] for child in children)
        if size > _MAX_EXPANDED:
            raise _shape_error(
                event,
                f"its aliases expand it past {_MAX_EXPANDED:,} characters (an alias bomb?): write the values out",
            )
        self._sizes[id(node)] = size
        return node


def _shape_error(event: yaml.Event, problem: str) -> DamagedNote:
    where = f" at line {event.start_mark.line + 2}" if event.start_mark is not None else ""  # after the fence
    return DamagedNote(f"front matter{where}: {problem}")


@_without_timestamps
class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_list(dumper: yaml.SafeDumper, data: Sequence[Any]) -> yaml.Node:
    flat = all(x is None or isinstance(x, str | int | float | bool) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # PyYAML writes these as raw line breaks inside plain/single-quoted scalars, which then load
    # back folded; double quotes escape them (\N, \L, \P). Other multi-line text reads best as a
    # literal block; the emitter falls back to quotes where a block cannot hold the value.
    style = '"' if any(c in data for c in "\x85\u2028\u2029") else "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(tuple, _represent_list)

_REL = re.compile(r'[ \t]*[-*][ \t]+(?:"([^"]*)"|([^\s\["\'#][^\s\[]*))[ \t]+\[\[([^\[\]]+)\]\](.*)')
_LINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_TAG = re.compile(r"(?<!\S)#([^\s#(),]++)(?!#)")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?[ \t]*")
_TITLE = re.compile(r"#[ \t]+(.+)")
_MISSING = object()


@dataclass(frozen=True)
class Document:
    """A parsed note. ``text`` is the whole text as given; line numbers are 1-based file lines."""

    text: str
    frontmatter: dict[str, Any]
    has_frontmatter: bool
    body: str
    body_start_line: int
    observations: tuple[Observation, ...]
    relations: tuple[Relation, ...]
    title_heading: str | None


def _split_lines(text: str) -> list[str]:
    # Only "\n" ends a line: str.splitlines() would also split on U+2028, \x1c and friends.
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _content(line: str) -> str:
    line = line[:-1] if line.endswith("\n") else line
    return line[:-1] if line.endswith("\r") else line


def _newline(lines: Sequence[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def _split(text: str) -> tuple[str, list[str], int | None]:
    """Return (bom, lines without the bom, index of the closing fence or None without front matter)."""
    bom = _BOM if text.startswith(_BOM) else ""
    lines = _split_lines(text[len(bom) :])
    if not lines or _content(lines[0]).rstrip() != "---":
        return bom, lines, None
    for i in range(1, len(lines)):
        if _content(lines[i]).rstrip() == "---":
            return bom, lines, i
    raise DamagedNote("front matter opened with '---' on line 1 is never closed: add a '---' line after it")


def _outside_fences(lines: Sequence[str], start: int, *, fenced: bool = True) -> Iterator[tuple[int, str]]:
    """Yield (index, content) of lines from ``start`` that are not inside fenced code blocks.

    ``fenced=False`` says the text holds no fence marker at all, so every line is outside.
    """
    if not fenced:
        yield from enumerate(map(_content, lines[start:]), start)
        return
    fence = ""
    for i in range(start, len(lines)):
        content = _content(lines[i])
        m = _FENCE.match(content)
        if not fence:
            if m:
                fence = m.group(1)
            else:
                yield i, content
        elif (
            m
            and m.group(1)[0] == fence[0]
            and len(m.group(1)) >= len(fence)
            and not content[m.end() :].strip()
        ):
            fence = ""


# The shape nearly every note's front matter has: one `key: plain value` or `key: [a, b]` per line.
_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SIMPLE_ENTRY = re.compile(rf"({_SIMPLE_KEY.pattern}):(?:[ \t]+(.*?))?[ \t]*")
_PLAIN_START = re.compile(r"""[^\s\-?:,\[\]{}#&*!|>'"%@`]""")
_STR_TAG = "tag:yaml.org,2002:str"
# Anything YAML treats specially as a character (non-printables, extra line breaks, a BOM):
# such front matter goes to the full parser.
_NOT_SIMPLE = re.compile("[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]")


# YAML reads a plain scalar as anything but a string only through a resolver filed under its
# first character: a scalar starting with any other character is a string.
_RESOLVED_FIRST = frozenset(k for k in _Loader.yaml_implicit_resolvers if k is not None)
assert None not in _Loader.yaml_implicit_resolvers  # a catch-all resolver would void the shortcut


def _plain_string(raw: str) -> str | None:
    """``raw`` if YAML would read it as exactly that string, else None (then YAML decides)."""
    # A tab is whitespace to YAML too: "a\t# note" ends at the comment, "10:\t30" is an error.
    if (
        not raw
        or not _PLAIN_START.match(raw)
        or "\t" in raw
        or ": " in raw
        or " #" in raw
        or raw.endswith(":")
    ):
        return None
    if raw[0] in _RESOLVED_FIRST:
        tag = _Loader.resolve(_Loader, yaml.ScalarNode, raw, (True, False))  # type: ignore[arg-type]
        if tag != _STR_TAG:
            return None  # numbers, booleans, null: leave them to YAML's own constructors
    return raw


def _simple_frontmatter(source: str) -> dict[str, Any] | None:
    """A fast reading of simple front matter, identical to YAML's; None for anything else.

    Full YAML construction costs about half a millisecond a note, most of a cold reindex.
    """
    if _NOT_SIMPLE.search(source):
        return None
    result: dict[str, Any] = {}
    for line in source.split("\n"):
        if not line.strip(" \t"):
            continue
        match = _SIMPLE_ENTRY.fullmatch(line)
        if match is None or match[1] in result or _plain_string(match[1]) is None:
            return None  # not simple, a repeated key, or a key YAML reads as a bool, null or number
        raw = match[2] or ""
        if raw.startswith("[") and raw.endswith("]"):
            inner = raw[1:-1].strip(" \t")
            items = [_plain_string(item.strip(" \t")) for item in inner.split(",")] if inner else []
            # In a flow sequence YAML also refuses some uses of ":" that a plain value allows.
            if any(item is None or any(c in item for c in "[]{}:") for item in items):
                return None
            result[match[1]] = items
        elif raw:
            value = _plain_string(raw)
            if value is None:
                return None
            result[match[1]] = value
        else:
            return None
    return result


def _load_frontmatter(source: str) -> dict[str, Any]:
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise DamagedNote(
            f"front matter holds {len(source):,} characters, more than the {MAX_FRONTMATTER_CHARS:,} "
            "Cairn reads: move long text into the body"
        )
    simple = _simple_frontmatter(source)
    if simple is not None:
        return simple
    try:
        data = yaml.load(source, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +2: 0-based, after the fence
        problem = getattr(exc, "problem", None) or str(exc)
        context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and context_mark is not None:
            context += f" that starts at line {context_mark.line + 2}"
        detail = f"{problem} ({context})" if context else problem
        raise DamagedNote(f"front matter is not valid YAML{where}: {detail}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DamagedNote(f"front matter must be 'key: value' lines, not a {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


def parse(text: str) -> Document:
    """Parse a note.

    Args:
        text: the whole file. A leading BOM is ignored for parsing and kept in ``Document.text``.
    Returns:
        The Document; text without a ``---`` first line has no front matter.
    Raises:
        DamagedNote: front matter never closed, not valid YAML, or not a mapping; or lines that
            end in a lone CR (classic Mac OS), which would hide the front matter and every line's
            own marks, such as ``#sensitive``, inside one long line.
    """
    if "\n" not in text and "\r" in text.rstrip("\r"):
        raise DamagedNote("its lines end in a lone CR (classic Mac OS): save it with LF or CRLF line endings")
    bom, lines, close = _split(text)
    frontmatter = _load_frontmatter("".join(lines[1:close])) if close is not None else {}
    start = 0 if close is None else close + 1
    observations: list[Observation] = []
    explicit: list[Relation] = []
    links: dict[str, Relation] = {}
    title: str | None = None
    # Cheap tests on each line decide which parsers run at all: this loop is most of a reindex.
    for i, content in _outside_fences(lines, start, fenced="```" in text or "~~~" in text):
        if title is None and content.startswith("#") and (m := _TITLE.fullmatch(content)):
            title = m.group(1).strip()
        if content.lstrip(" \t")[:1] in ("-", "*"):
            if obs := _observation(content, i + 1):
                observations.append(obs)
            elif rel := parse_relation(content):
                explicit.append(Relation(rel.type, rel.target, rel.context, i + 1, rel.inline))
                continue
        if "[[" in content:
            for target in _link_targets(content):
                links.setdefault(target, Relation("links_to", target, line=i + 1, inline=True))
    return Document(
        text=text,
        frontmatter=frontmatter,
        has_frontmatter=close is not None,
        body="".join(lines[start:]),
        body_start_line=start + 1,
        observations=tuple(observations),
        relations=tuple(explicit) + tuple(links.values()),
        title_heading=title,
    )


def _simple_dump(mapping: Mapping[str, Any]) -> list[str] | None:
    """The lines ``yaml.dump`` writes for front matter of plain strings and flat lists of them
    (nearly every note's), without running its emitter (0.8 ms, a sixth of a write); None for
    anything else. The reverse of ``_simple_frontmatter``, and byte for byte what PyYAML writes:
    a test compares the two on generated values."""
    lines = []
    for key, value in mapping.items():
        if not isinstance(key, str) or not _SIMPLE_KEY.fullmatch(key) or _plain_string(key) is None:
            return None
        if isinstance(value, str):
            if not _plain_scalar(value):
                return None
            lines.append(f"{key}: {value}")
        elif isinstance(value, list | tuple):
            if not all(isinstance(item, str) and _plain_scalar(item, flow=True) for item in value):
                return None
            lines.append(f"{key}: [{', '.join(value)}]")
        else:
            return None
    return lines


def _plain_scalar(value: str, *, flow: bool = False) -> bool:
    """True if YAML reads ``value`` written bare (in a ``[...]`` list with ``flow``) as itself."""
    # PyYAML's emitter (Emitter.analyze_scalar) quotes what _plain_string lets through in these
    # cases: a document marker at the start, and the last code point, which it counts as special.
    if (
        value != value.strip()
        or _NOT_SIMPLE.search(value)
        or "\n" in value
        or value.startswith(("---", "..."))
        or "\U0010ffff" in value
        or _plain_string(value) is None
    ):
        return False
    return not (flow and any(c in value for c in ",[]{}:?"))


def _nesting(value: Any, limit: int) -> int:
    """How deep lists and dicts nest in ``value``, counting no further than ``limit`` + 1 (a
    list that holds itself would otherwise never end)."""
    if limit < 0 or not isinstance(value, list | tuple | dict):
        return 0
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
    return 1 + max((_nesting(item, limit - 1) for item in items), default=0)


def _check_writable(lines: Sequence[str]) -> None:
    """Refuse front matter this module would refuse to read back (see ``MAX_FRONTMATTER_CHARS``)."""
    size = sum(map(len, lines))
    if size > MAX_FRONTMATTER_CHARS:
        raise InvalidInput(
            f"front matter would hold {size:,} characters, more than the {MAX_FRONTMATTER_CHARS:,} "
            "a note may: put long text in the body"
        )


def _dump_lines(mapping: Mapping[str, Any], nl: str) -> list[str]:
    for key, value in mapping.items():
        if _nesting(value, MAX_FRONTMATTER_DEPTH) >= MAX_FRONTMATTER_DEPTH:
            raise InvalidInput(f"front matter field {key!r} nests lists or maps too deep: flatten it")
    simple = _simple_dump(mapping)
    if simple is not None:
        return [line + nl for line in simple]
    try:
        out = yaml.dump(
            dict(mapping),
            Dumper=_Dumper,
            allow_unicode=True,
            sort_keys=False,
            default_flow_style=False,
            width=1 << 30,
        )
    except yaml.YAMLError as exc:
        raise InvalidInput(f"cannot write these front matter values as YAML: {exc}") from exc
    lines = out.split("\n")[:-1]
    if lines[-1] == "...":  # document end after a "|+" block: it would end the front matter early
        lines.pop()
    return [line + nl for line in lines]


def _end_line(node: yaml.Node) -> int:
    """Exclusive end line of a node: block collections end with their last child, not at the next token."""
    if isinstance(node, yaml.ScalarNode) or node.flow_style:
        return node.end_mark.line + (1 if node.end_mark.column else 0)
    children = node.value if isinstance(node, yaml.SequenceNode) else [n for kv in node.value for n in kv]
    return max(_end_line(c) for c in children)


def _key_spans(lines: list[str], close: int) -> dict[str, list[tuple[int, int, str]]] | None:
    """Map each top-level key to its (start, end, trailing comment) line spans, or None when the
    front matter is not one-key-per-line block YAML and cannot be edited line by line."""
    root = yaml.compose("".join(lines[1:close]), Loader=_Loader)
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    spans: dict[str, list[tuple[int, int, str]]] = {}
    previous_end = 1
    for key, value in root.value:
        start = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode) or key.start_mark.column != 0 or start < previous_end:
            return None
        end = max(start + 1, _end_line(value) + 1)
        while end > start + 1 and not _content(lines[end - 1]).strip():  # a block scalar's trailing blanks
            end -= 1
        comment = ""
        if end == start + 1 and value.end_mark.line + 1 == start:
            tail = _content(lines[start])[value.end_mark.column :]
            comment = tail if re.match(r"[ \t]+#", tail) else ""
        spans.setdefault(key.value, []).append((start, end, comment))
        previous_end = end
    return spans


def set_fields(text: str, updates: Mapping[str, Any], remove: Iterable[str] = ()) -> str:
    """Set and remove front-matter fields, leaving every other byte as it was.

    An existing key's lines are replaced in place (a trailing ``# comment`` on a one-line value is
    kept); a new key goes just before the closing fence; a note without front matter gets one.

    Args:
        text: the whole note.
        updates: key -> new value (str, int, float, bool, None, list, dict).
        remove: keys to delete; a key also in ``updates`` is set, not removed.
    Returns:
        The edited text (``text`` itself when there is nothing to change).
    Raises:
        DamagedNote: the note's front matter does not parse; it is never edited.
        InvalidInput: a value cannot be written as YAML, or the front matter would grow too large
            or nest too deep to be read back.
    """
    updates = dict(updates)
    drop = [k for k in dict.fromkeys(remove) if k not in updates]
    if not updates and not drop:
        return text
    doc = parse(text)
    bom, lines, close = _split(text)
    nl = _newline(lines)
    if close is None:
        if not updates:
            return text
        return bom + "".join(["---" + nl, *_dump_lines(updates, nl), "---" + nl, *lines])
    merged = {k: v for k, v in doc.frontmatter.items() if k not in drop} | updates
    spans = _key_spans(lines, close)
    edited = _edit_lines(doc, lines, close, spans, updates, drop, nl) if spans is not None else None
    # Line by line unless that would not read back as intended: an alias whose anchor was on a
    # replaced line, a "..." end marker before new keys, flow style. Then the block is rewritten
    # (anchors become plain values, comments go); the body is always kept as it was.
    if edited is not None and _reads_as(bom + "".join(edited), merged):
        _check_writable(edited[: len(edited) - (len(lines) - close)])
        return bom + "".join(edited)
    middle = _dump_lines(merged, nl) if merged else []
    _check_writable(middle)
    return bom + "".join([lines[0], *middle, *lines[close:]])


def _reads_as(text: str, frontmatter: Mapping[str, Any]) -> bool:
    try:
        return parse(text).frontmatter == frontmatter
    except DamagedNote:
        return False


def _edit_lines(
    doc: Document,
    lines: list[str],
    close: int,
    spans: dict[str, list[tuple[int, int, str]]],
    updates: Mapping[str, Any],
    drop: Sequence[str],
    nl: str,
) -> list[str]:
    """The note's lines with only the changed keys' lines replaced, removed or added."""
    inserted: dict[int, list[str]] = {}
    deleted: set[int] = set()
    appended: list[str] = []
    for key, value in updates.items():
        old = doc.frontmatter.get(key, _MISSING)
        if type(old) is type(value) and old == value and len(spans.get(key, ())) == 1:
            continue  # unchanged: keep the hand-written spelling
        new = _dump_lines({key: value}, nl)
        if key not in spans:
            appended += new
            continue
        start, end, comment = spans[key][0]
        if comment and end == start + 1 and len(new) == 1:
            new = [_content(new[0]) + comment + nl]
        inserted[start] = new
        for s, e, _ in spans[key]:
            deleted.update(range(s, e))
    for key in drop:
        for s, e, _ in spans.get(key, ()):
            deleted.update(range(s, e))
    out = [lines[0]]
    for i in range(1, close):
        out += inserted.get(i, ())
        if i not in deleted:
            out.append(lines[i])
    return [*out, *appended, *lines[close:]]


def new_note(
    frontmatter: Mapping[str, Any],
    title: str,
    body: str = "",
    observations: Sequence[str] = (),
    relations: Sequence[str] = (),
) -> str:
    """Text of a brand new note (LF line endings, exactly one final newline).

    Args:
        frontmatter: fields in the order they should appear.
        title: the ``# `` heading.
        body: free Markdown placed under the heading.
        observations, relations: lines without the leading ``- ``; each empty section is omitted.
    Returns:
        The note text.
    Raises:
        InvalidInput: an empty title, a title/observation/relation holding a line break, or front
            matter too large or nested too deep to be read back.
    """
    if not title.strip():
        raise InvalidInput("a note needs a non-empty title")
    for value in (title, *observations, *relations):
        if "\n" in value or "\r" in value:
            raise InvalidInput(f"must be a single line: {value!r}")
    front = _dump_lines(frontmatter, "\n") if frontmatter else []
    _check_writable(front)
    parts = ["---\n", *front, "---\n\n", f"# {title}\n"]
    body = re.sub(r"\A(?:[ \t]*\r?\n)+", "", body).rstrip()
    if body:
        parts.append(f"\n{body}\n")
    for heading, items in (("Observations", observations), ("Relations", relations)):
        if items:
            parts.append(f"\n## {heading}\n" + "".join(f"- {item}\n" for item in items))
    return "".join(parts)


def append_to_section(text: str, section: str, line: str) -> str:
    """Append ``- {line}`` to the ``## {section}`` section (matched case-insensitively).

    The item goes after the section's last non-blank line; a missing section is added at the end.
    The file's line endings are used and every other byte stays as it was.

    Args:
        text: the whole note.
        section: heading text, e.g. ``"Observations"``.
        line: the item without the leading ``- ``.
    Returns:
        The edited text.
    Raises:
        InvalidInput: ``line`` holds a line break.
        DamagedNote: the front matter is never closed.
    """
    if "\n" in line or "\r" in line:
        raise InvalidInput(f"a section item must be a single line: {line!r}")
    bom, lines, close = _split(text)
    nl = _newline(lines)
    item = f"- {line}{nl}"
    head: int | None = None
    end = len(lines)
    for i, content in _outside_fences(lines, 0 if close is None else close + 1):
        m = _HEADING.fullmatch(content)
        if not m:
            continue
        level = len(m.group(1))
        if head is None:
            if level == 2 and (m.group(2) or "").strip().casefold() == section.strip().casefold():
                head = i
        elif level <= 2:
            end = i
            break
    if head is None:
        tail = [nl] if lines and not lines[-1].endswith("\n") else []
        if lines and _content(lines[-1]).strip():
            tail.append(nl)
        return bom + "".join([*lines, *tail, f"## {section}{nl}", item])
    last = max(i for i in range(head, end) if _content(lines[i]).strip())
    before = lines[: last + 1]
    if not before[-1].endswith("\n"):
        before[-1] += nl
    return bom + "".join([*before, item, *lines[last + 1 :]])


def _split_context(text: str) -> tuple[str, str | None]:
    """Split a trailing balanced ``(context)`` preceded by whitespace (or at the start) off ``text``."""
    text = text.rstrip()
    if not text.endswith(")"):
        return text, None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                before, context = text[:i], text[i + 1 : -1].strip()
                if context and (not before or before[-1].isspace()):
                    return before.rstrip(), context
                break
    return text, None


def parse_observation(line: str) -> Observation | None:
    """Read ``- [category] content #tag (context)``; None when the line is not an observation.

    Checkbox items, ``[text](url)`` links and bare ``[[wikilink]]`` items are not observations.
    """
    return _observation(_content(line))


def _observation(content: str, line: int = 0) -> Observation | None:
    m = OBSERVATION.fullmatch(content)
    if not m or not is_category(m.group(1)):
        return None
    rest, context = _split_context(m.group(2))
    if "#" in rest:
        # Tags are read where they stand; only the run of tags that ends the sentence is taken
        # off the content, so "issue #123 is fixed" keeps its words in place.
        tags = tuple(dict.fromkeys(_TAG.findall(rest)))
        rest = _TRAILING_TAGS.sub("", rest)
    else:
        tags = ()
    content = " ".join(rest.split())
    if not content:
        return None
    return Observation(m.group(1).strip(), content, tags, context, line)


def _target(inner: str) -> str:
    return inner.split("|", 1)[0].split("#", 1)[0].strip()


def _link_targets(text: str) -> Iterator[str]:
    for m in _LINK.finditer(text):
        if target := _target(m.group(1)):
            yield target


def parse_relation(line: str) -> Relation | None:
    """Read ``- type [[Target]] (context)`` (type may be ``"quoted words"``); None when not a relation."""
    m = _REL.fullmatch(_content(line))
    if not m:
        return None
    rel_type = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
    target = _target(m.group(3))
    context = None
    if rest := m.group(4).strip():
        before, context = _split_context(rest)
        if before or context is None:
            return None
    if not rel_type or not target:
        return None
    return Relation(rel_type, target, context)


def format_observation(
    category: str, content: str, tags: Sequence[str] = (), context: str | None = None
) -> str:
    """``[category] content #tag1 #tag2 (context)``, without the leading ``- ``.

    A tag the content already holds as ``#tag`` stays where it is and is not repeated at the end.

    Raises:
        InvalidInput: a control character (NUL and the like; tab aside) in any part.
    """
    for what, value in (("category", category), ("text", content), ("context", context or "")):
        refuse_control_chars(value, f"observation {what}")
    for tag in tags:
        refuse_control_chars(tag, "tag")
    inline = set(_TAG.findall(content))
    added = "".join(f" #{t.lstrip('#')}" for t in tags if t.lstrip("#") not in inline)
    text = f"[{category.strip()}] {content.strip()}" + added
    return f"{text} ({context.strip()})" if context and context.strip() else text


def format_relation(type: str, target: str, context: str | None = None) -> str:
    """``type [[Target]] (context)``; a type with whitespace (or a leading ``[``/``#``/quote) is quoted.

    Raises:
        InvalidInput: an empty type, a type holding ``"``, or a target holding ``[ ] | #`` or a line break.
    """
    for what, value in (("type", type), ("target", target), ("context", context or "")):
        refuse_control_chars(value, f"relation {what}")
    type, target = type.strip(), target.strip()
    if not type or '"' in type or "\n" in type:
        raise InvalidInput(f"relation type must be non-empty, one line and without '\"': {type!r}")
    if not target or re.search(r"[\[\]|#\r\n]", target):
        raise InvalidInput(
            f"relation target must be non-empty and without [ ] | # or line breaks: {target!r}"
        )
    if re.search(r"\s|\[", type) or type[0] in "#'":
        type = f'"{type}"'
    text = f"{type} [[{target}]]"
    return f"{text} ({context.strip()})" if context and context.strip() else text


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 and DEL; tab and line ends aside
_TRAILING_TAGS = re.compile(r"(?:(?:^|\s+)#[^\s#(),]+)+\s*$")


def refuse_control_chars(text: str, what: str) -> None:
    """Raise InvalidInput when ``text`` holds a control character (NUL, ESC ...); tab and line
    breaks are left to the caller, which knows whether a line break is allowed.

    Raises:
        InvalidInput: naming ``what`` and the character.
    """
    if found := _CONTROL.search(text):
        raise InvalidInput(
            f"{what} holds the control character U+{ord(found[0]):04X}; notes are plain text: remove it"
        )


def _strip_bullet(spec: str, what: str) -> str:
    if "\n" in spec.strip() or "\r" in spec.strip():
        raise InvalidInput(f"an {what} must be a single line, got {spec!r}")
    refuse_control_chars(spec, "an " + what)
    spec = spec.strip()
    return spec[1:].lstrip() if spec[:1] in "-*" and spec[1:2] in (" ", "\t") else spec


def parse_observation_spec(spec: str) -> Observation:
    """Read an observation typed by a user: ``[category] text #tag (context)``, ``- `` optional.

    Raises:
        InvalidInput: a line break, a missing or empty ``[category]``, a checkbox, or no text.
    """
    body = _strip_bullet(spec, "observation")
    m = re.match(r"\[([^\[\]]*)\]", body)
    if m and m.group(1) in (" ", "x", "X"):
        raise InvalidInput(
            f"[{m.group(1)}] is a checkbox (a task list item), not a category: write a category "
            f"such as [task] or [done] instead: {spec!r}"
        )
    if m and not m.group(1).strip():
        raise InvalidInput(f"the [category] is blank: name one, e.g. [fact] or [preference]: {spec!r}")
    if not m or not is_category(m.group(1)):
        raise InvalidInput(
            f"an observation starts with a [category], e.g. '[fact] text #tag (context)': {spec!r}"
        )
    obs = parse_observation(f"- {body}")
    if obs is None:
        raise InvalidInput(f"an observation needs text after its [category]: {spec!r}")
    return obs


def parse_relation_spec(spec: str) -> Relation:
    """Read a relation typed by a user: ``type [[Target]] (context)``, ``- `` optional.

    Raises:
        InvalidInput: anything else, e.g. a missing type or target, or text after the context.
    """
    rel = parse_relation(f"- {_strip_bullet(spec, 'relation')}")
    if rel is None:
        raise InvalidInput(
            f"a relation looks like 'type [[Target]] (context)' or '\"two words\" [[Target]]': {spec!r}"
        )
    return rel


def inline_links(text: str) -> list[str]:
    """Targets of ``[[X]]``, ``[[X|alias]]`` and ``[[X#heading]]`` (all -> ``X``), first occurrence
    order, without duplicates, skipping fenced code blocks."""
    targets: dict[str, None] = {}
    for _, content in _outside_fences(_split_lines(text), 0):
        targets.update(dict.fromkeys(_link_targets(content)))
    return list(targets)
