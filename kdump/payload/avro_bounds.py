"""The bounds of :mod:`kdump.payload.bounds` for Avro, kept around fastavro's reader.

fastavro's ``schemaless_reader`` (compiled) trusts the payload: an array block count of 2^62 items of a type that
takes no bytes (``null``, a ``fixed`` of size 0, a record of such fields) appends without end, and a recursive
schema nests as deep as the bytes say until the C stack overflows.  So a payload reaches fastavro only when what
it builds is known to be inside the bounds, proven one of two ways:

* from the schema alone (no bytes read): a schema that is not recursive, whose static nesting is within
  :data:`~kdump.payload.bounds.MAX_DEPTH` and whose arrays hold no zero-size items builds at most
  ``(payload bytes + 1) * widest`` values, ``widest`` being the most values one item (or the top value) builds
  outside its own arrays and maps: every array item and map entry owns at least one byte of the encoding (Avro
  spec, "Binary Encoding": each non-null value takes at least a byte, and only ``null``, ``fixed`` of size 0
  and records of those take none).  Payloads short enough for that product to stay within
  :data:`~kdump.payload.bounds.MAX_VALUES` go straight to fastavro: the common case costs one comparison.  A
  schema with no array or map builds its own values whatever the payload's length: any payload within
  :data:`~kdump.payload.bounds.MAX_PAYLOAD_BYTES` goes straight to fastavro (a record of long strings or bytes
  was scanned first past ~250 KB, half the speed).
* otherwise by a scan of the payload (:func:`AvroShape.scan`) that walks the encoding as the spec defines it
  (zig-zag varints; arrays and maps as blocks, a negative count followed by the block's byte size; unions as a
  branch index), builds nothing, counts the values and the depth, and multiplies instead of looping for
  zero-size items.  Its work is linear in the payload's bytes.
"""

from __future__ import annotations

from typing import Any

from kdump.payload.bounds import MAX_DEPTH, MAX_PAYLOAD_BYTES, MAX_VALUES, too_deep, too_many

NULL, BOOLEAN, VARINT, FLOAT, DOUBLE, BYTES, FIXED, RECORD, ARRAY, MAP, UNION = range(11)
_PRIMITIVES = {
    "null": NULL,
    "boolean": BOOLEAN,
    "int": VARINT,
    "long": VARINT,
    "float": FLOAT,
    "double": DOUBLE,
    "bytes": BYTES,
    "string": BYTES,
}
_WIDTH = {BOOLEAN: 1, FLOAT: 4, DOUBLE: 8}
#: ``bytes.translate`` table: 1 for a byte that ends a varint (below 0x80), 0 for one that continues it.
_VARINT_ENDS = bytes(1 if b < 0x80 else 0 for b in range(256))


class _Node:
    """One schema node; named types are one node however often they are referred to (recursion is a cycle)."""

    __slots__ = ("children", "kind", "size", "zero", "zero_depth", "zero_values")

    def __init__(self, kind: int, size: int = 0) -> None:
        self.kind = kind
        self.size = size
        self.children: list[_Node] = []
        #: the value always takes zero bytes (null, fixed of size 0, records of such fields); then it always
        #: builds ``zero_values`` values, ``zero_depth`` levels deep
        self.zero = False
        self.zero_values = 0
        self.zero_depth = 0


class AvroShape:
    """What the bounds need of one parsed writer's schema (fastavro's ``parse_schema`` output and its named
    types)."""

    def __init__(self, parsed: Any, named: dict[str, Any]) -> None:
        self._named = named
        self._built: dict[str, _Node] = {}
        self._building: set[str] = set()
        self._order: list[_Node] = []  # post-order: a node's children (but cycles) before it
        self.recursive = False
        self.root = self._node(parsed)
        del self._named, self._built, self._building
        self._mark_zero()
        #: payloads of at most this many bytes (after the framing) are within the bounds whatever they hold
        self.fast_limit = self._fast_limit()
        del self._order

    # -- the graph ------------------------------------------------------------------------------------------

    def _node(self, s: Any) -> _Node:
        if isinstance(s, str):
            kind = _PRIMITIVES.get(s)
            if kind is not None:
                return self._add(_Node(kind))
            found = self._built.get(s)
            if found is not None:
                if s in self._building:
                    self.recursive = True
                return found
            definition = self._named.get(s)
            if definition is None:
                raise ValueError(f"unknown Avro type {s!r}")
            return self._node(definition)
        if isinstance(s, list):
            node = _Node(UNION)
            node.children = [self._node(branch) for branch in s]
            return self._add(node)
        if not isinstance(s, dict):
            raise ValueError(f"not an Avro schema: {s!r}")
        t = s.get("type")
        name = s.get("name")
        if t in ("record", "error"):
            node = _Node(RECORD)
            if isinstance(name, str):
                self._built[name] = node
                self._building.add(name)
            node.children = [self._node(f["type"]) for f in s.get("fields", ())]
            if isinstance(name, str):
                self._building.discard(name)
            return self._add(node)
        if t == "enum" or t == "fixed":
            node = _Node(VARINT) if t == "enum" else _Node(FIXED, int(s.get("size", 0)))
            if isinstance(name, str):
                self._built[name] = node
            return self._add(node)
        if t == "array" or t == "map":
            node = _Node(ARRAY if t == "array" else MAP)
            node.children = [self._node(s.get("items" if t == "array" else "values"))]
            return self._add(node)
        return self._node(t)  # a logical type over its underlying type, or {"type": <a schema>}

    def _add(self, node: _Node) -> _Node:
        self._order.append(node)
        return node

    def _mark_zero(self) -> None:
        """The zero-size nodes, the least fixed point (a recursive record is never zero-size: it cannot end)."""
        changed = True
        while changed:
            changed = False
            for node in self._order:
                if node.zero:
                    continue
                if node.kind == NULL or (node.kind == FIXED and node.size == 0):
                    node.zero, node.zero_values = True, 1
                elif node.kind == RECORD and all(c.zero for c in node.children):
                    node.zero = True
                    node.zero_values = min(MAX_VALUES + 1, 1 + sum(c.zero_values for c in node.children))
                    node.zero_depth = 1 + max((c.zero_depth for c in node.children), default=0)
                else:
                    continue
                changed = True

    def _fast_limit(self) -> int:
        if self.recursive:
            return -1
        depth: dict[int, int] = {}
        width: dict[int, int] = {}
        widest = 1
        repeats = False
        for node in self._order:  # children first: the graph has no cycle
            k = node.kind
            kids = node.children
            if k == RECORD:
                depth[id(node)] = 1 + max((depth[id(c)] for c in kids), default=0)
                width[id(node)] = 1 + sum(width[id(c)] for c in kids)
            elif k == UNION:
                depth[id(node)] = max((depth[id(c)] for c in kids), default=0)
                width[id(node)] = max((width[id(c)] for c in kids), default=1)
            elif k == ARRAY or k == MAP:
                item = kids[0]
                repeats = True
                if k == ARRAY and item.zero:
                    return -1
                depth[id(node)] = 1 + depth[id(item)]
                width[id(node)] = 1
                widest = max(widest, width[id(item)] + (k == MAP))
            else:
                depth[id(node)] = 0
                width[id(node)] = 1
        if depth[id(self.root)] - 1 > MAX_DEPTH:  # levels below the top value
            return -1
        widest = max(widest, width[id(self.root)])
        if not repeats:  # no array or map: the values are the schema's, however long its strings and bytes
            return MAX_PAYLOAD_BYTES if widest <= MAX_VALUES else -1
        return MAX_VALUES // widest - 1

    # -- the scan -------------------------------------------------------------------------------------------

    def scan(self, data: bytes, start: int) -> None:
        """Walk the datum at ``data[start:]`` without building it; raise
        :class:`~kdump.payload.bounds.PayloadBound` past a bound, EOFError or ValueError on bytes that are not
        a datum of the schema (fastavro is not asked then)."""
        end = len(data)
        budget = MAX_VALUES
        ends: bytes | None = None  # 1 where a varint ends (a byte below 0x80), else 0: made when first needed

        def varints_end(pos: int, count: int) -> int | None:
            """Where ``count`` varints from ``pos`` end (a byte search, C speed), None when the payload holds
            fewer (the item loop then says where it runs out)."""
            nonlocal ends
            if ends is None:
                ends = data.translate(_VARINT_ENDS)
            if ends.count(1, pos, end) < count:
                return None
            lo, hi = pos + count, end  # the count-th end lies in (lo - 1, hi]: each varint is a byte at least
            while lo < hi:
                mid = (lo + hi) // 2
                if ends.count(1, pos, mid) >= count:
                    hi = mid
                else:
                    lo = mid + 1
            return lo

        def varint(pos: int) -> tuple[int, int]:
            result = shift = 0
            while True:
                if pos >= end:
                    raise EOFError(f"truncated: a varint runs past the end at payload byte {pos}")
                b = data[pos]
                pos += 1
                result |= (b & 0x7F) << shift
                if b < 0x80:
                    return (result >> 1) ^ -(result & 1), pos
                shift += 7

        def skip(pos: int, n: int) -> int:
            pos += n
            if pos > end:
                raise EOFError(f"truncated: {n} bytes wanted at payload byte {pos - n}, {end - pos + n} left")
            return pos

        def value(node: _Node, pos: int, depth: int) -> int:
            nonlocal budget
            while node.kind == UNION:
                at = pos
                index, pos = varint(pos)
                if not 0 <= index < len(node.children):
                    raise ValueError(
                        f"union branch {index} at payload byte {at}, the schema has {len(node.children)}"
                    )
                node = node.children[index]
            if node.zero:
                budget -= node.zero_values
                if budget < 0:
                    raise too_many()
                if depth + node.zero_depth - 1 > MAX_DEPTH:
                    raise too_deep()
                return pos
            budget -= 1
            if budget < 0:
                raise too_many()
            k = node.kind
            if k == VARINT:
                return varint(pos)[1]
            if k == BYTES:
                at = pos
                n, pos = varint(pos)
                if n < 0:
                    raise ValueError(f"negative length {n} at payload byte {at}")
                return skip(pos, n)
            if k == FIXED:
                return skip(pos, node.size)
            if k in _WIDTH:
                return skip(pos, _WIDTH[k])
            if depth > MAX_DEPTH:
                raise too_deep()
            if k == RECORD:
                for child in node.children:
                    pos = value(child, pos, depth + 1)
                return pos
            item = node.children[0]  # ARRAY or MAP
            is_map = k == MAP
            while True:
                count, pos = varint(pos)
                if count == 0:
                    return pos
                if count < 0:
                    count = -count
                    pos = varint(pos)[1]  # the block's size in bytes
                if not is_map and item.zero:
                    budget -= count * item.zero_values
                    if budget < 0:
                        raise too_many()
                    if depth + item.zero_depth > MAX_DEPTH:
                        raise too_deep()
                    continue
                if not is_map and item.kind == VARINT and count > 64:  # ints, longs, enums: skip the block
                    after = varints_end(pos, count)
                    if after is not None:
                        budget -= count
                        if budget < 0:
                            raise too_many()
                        pos = after
                        continue
                for _ in range(count):  # every item takes a byte at least: the end of the bytes ends this
                    if is_map:
                        budget -= 1
                        at = pos
                        n, pos = varint(pos)
                        if n < 0:
                            raise ValueError(f"negative length {n} at payload byte {at}")
                        pos = skip(pos, n)
                    pos = value(item, pos, depth + 1)

        value(self.root, start, 0)
