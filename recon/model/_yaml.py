"""Reading a YAML or JSON file safely: bounded size, UTF-8 only, no duplicate keys, and a
small alias budget, each problem one ConfigError line naming the file (and the line).

The checks run before anything expensive: the size from ``stat`` and a capped read, the
encoding on the bytes, nesting depth and alias count on the parser's event stream (which
does not expand aliases), the expansion an alias would cause on the composed node graph
(shared, not copied), and only then construction of Python values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from recon.errors import ConfigError

ONE_MIB = 1024 * 1024
MAX_BYTES = ONE_MIB
"""Input files (cases, contracts, grading, entries, release definitions) are small."""
MAX_JSON_BYTES = 256 * 1024 * 1024
"""Files the harness writes itself (release JSON, manifests) may be larger."""
MAX_ALIASES = 16
MAX_DEPTH = 64
MAX_REPEATED_NODES = 10_000
"""How many nodes the aliases of one file may repeat in all (an alias bomb repeats billions)."""
MAX_LINE = 400
"""The longest text an error message quotes from a file."""

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


def oneline(text: str, limit: int = MAX_LINE) -> str:
    """``text`` as one bounded line: control characters escaped, the middle elided."""
    flat = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if len(flat) <= limit:
        return flat
    keep = (limit - 5) // 2
    return f"{flat[:keep]} […] {flat[-keep:]}"


def read_text(path: Path, shown: str, limit: int = MAX_BYTES) -> str:
    """The file as text: at most ``limit`` bytes, UTF-8, no NUL byte."""
    try:
        size = path.stat().st_size
        if size > limit:
            raise ConfigError(_too_big(shown, size, limit))
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise ConfigError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{shown}: is a folder, not a file; give the file's path") from None
    except OSError as err:
        raise ConfigError(f"{shown}: cannot be read ({err.strerror}); check the path") from None
    if len(data) > limit:
        raise ConfigError(_too_big(shown, len(data), limit))
    nul = data.find(b"\0")
    if nul >= 0:
        raise ConfigError(
            f"{shown}: a binary file (NUL byte at offset {nul}), not text; save it as UTF-8 text"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{shown}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}); "
            "save it as UTF-8"
        ) from None
    return text.removeprefix("\ufeff")


def _too_big(shown: str, size: int, limit: int) -> str:
    return (
        f"{shown}: {size} bytes, over the {limit / ONE_MIB:g} MiB limit for this kind of file "
        "(read before parsing); check it is the file you meant, or make it smaller"
    )


class _Loader(_Base):  # type: ignore[valid-type,misc]
    """The safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:
                continue  # an unhashable key: the base loader reports it
            if first is not key_node:
                raise _Duplicate(key, first, key_node)
        return super().construct_mapping(node, deep=deep)


class _Duplicate(Exception):
    def __init__(self, key: Any, first: Node, again: Node) -> None:
        super().__init__(key)
        self.key, self.first, self.again = key, first, again


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""


def _scan(text: str, shown: str) -> None:
    """Depth and alias count from the event stream, before any node is composed."""
    depth = aliases = 0
    for event in yaml.parse(text, Loader=_Base):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise ConfigError(
                    f"{shown}: {_where(event.start_mark)}more than {MAX_ALIASES} YAML aliases "
                    "(*name); write the values out instead"
                )
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(
                    f"{shown}: {_where(event.start_mark)}nested more than {MAX_DEPTH} levels "
                    "deep; flatten it"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _repeated(root: Node, shown: str) -> int:
    """How many nodes the document holds beyond its distinct ones (what aliases repeat).
    An alias inside the value it names (a cycle) is refused."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in open_nodes:
            raise ConfigError(
                f"{shown}: {_where(node.start_mark)}an alias refers to the value that holds "
                "it (a cycle); write the value out instead"
            )
        open_nodes.add(id(node))
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(id(node))
        sizes[id(node)] = total
        return total

    return size(root) - len(sizes)


def parse_yaml(text: str, shown: str) -> Any:
    """The YAML document in ``text`` as Python values; any problem is one ConfigError."""
    try:
        _scan(text, shown)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if _repeated(node, shown) > MAX_REPEATED_NODES:
                raise ConfigError(
                    f"{shown}: YAML aliases repeat more than {MAX_REPEATED_NODES} values "
                    "(an alias bomb?); write the values out instead"
                )
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except _Duplicate as dup:
        first = dup.first.start_mark.line + 1
        raise ConfigError(
            f"{shown}: {_where(dup.again.start_mark)}duplicate key "
            f"{oneline(repr(dup.key), 80)} (first at line {first}); keep one of them"
        ) from None
    except yaml.reader.ReaderError as err:
        char = err.character if isinstance(err.character, int) else ord(err.character[:1] or "?")
        raise ConfigError(
            f"{shown}: malformed YAML: character #x{char:04x} at offset {err.position}: "
            f"{oneline(err.reason, 80)}; remove it"
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise ConfigError(
            f"{shown}: malformed YAML: {_where(mark)}{oneline(problem)}; fix the syntax there"
        ) from None
    except (ValueError, OverflowError) as err:  # a scalar Python cannot hold (a 5,000-digit int)
        why = oneline(str(err).split(";")[0], 120)
        raise ConfigError(
            f"{shown}: malformed YAML: a value too large to read ({why}); write a smaller one"
        ) from None


def parse_json(text: str, shown: str) -> Any:
    """A JSON document; a key given twice in one object is an error."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise ConfigError(
                    f"{shown}: duplicate key {oneline(repr(key), 80)}; keep one of them"
                )
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{shown}: malformed JSON: line {err.lineno}: {err.msg}") from None
    except ValueError as err:
        raise ConfigError(f"{shown}: malformed JSON: {oneline(str(err), 120)}") from None
    except RecursionError:
        raise ConfigError(f"{shown}: malformed JSON: nested too deeply") from None
