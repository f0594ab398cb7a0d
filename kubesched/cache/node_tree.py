"""``NodeTree``: node names grouped by zone, listed zone-round-robin
(``pkg/scheduler/backend/cache/node_tree.go``).

Zones are kept in first-seen order (a zone that becomes empty is dropped and, if it
reappears, goes to the end), nodes within a zone in insertion order. ``list()`` yields
index 0 of every zone (zone order), then index 1 of every zone, ... skipping exhausted
zones. This is the order of ``Snapshot.node_info_list`` and hence of filtering.

Each zone is an insertion-ordered ``dict`` (name -> ``None``) so add/remove are O(1)
instead of upstream's O(zone size) slice scans; the resulting order is identical.
"""

from __future__ import annotations

import logging
from itertools import zip_longest

from kubesched.api.node import Node, zone_key
from kubesched.cache.errors import CacheError

log = logging.getLogger(__name__)

_MISSING = ""  # node names are never empty


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``) for the characters that occur in node names and
    zone keys: backslash and double quote escaped, control characters as ``\\xNN``."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class NodeTree:
    """Zone -> node names; ``num_nodes`` counts the names stored (not the zones)."""

    __slots__ = ("_zones", "num_nodes")

    def __init__(self) -> None:
        self._zones: dict[str, dict[str, None]] = {}
        self.num_nodes = 0

    def add_node(self, node: Node) -> None:
        """``nodeTree.addNode``: append ``node.name`` to its zone (creating the zone at the end of
        the zone order). A name already present in that zone is ignored (logged)."""
        zone = zone_key(node.labels)
        names = self._zones.get(zone)
        if names is None:
            self._zones[zone] = {node.name: None}
        elif node.name in names:
            log.info("Did not add to the NodeTree because it already exists: node=%s", node.name)
            return
        else:
            names[node.name] = None
        self.num_nodes += 1

    def remove_node(self, node: Node) -> None:
        """``nodeTree.removeNode``: remove ``node.name`` from its zone (dropping the zone if it
        becomes empty). Raises :class:`CacheError` ``node "<name>" in group "<zone>" was not found``."""
        zone = zone_key(node.labels)
        names = self._zones.get(zone)
        if names is None or node.name not in names:
            raise CacheError(f"node {go_quote(node.name)} in group {go_quote(zone)} was not found")
        del names[node.name]
        if not names:
            del self._zones[zone]
        self.num_nodes -= 1

    def update_node(self, old: Node | None, new: Node) -> None:
        """``nodeTree.updateNode``: if the zone key changed, remove the old entry (a missing one
        is ignored) and add the new one; otherwise nothing (a node's name never changes)."""
        old_zone = zone_key(old.labels) if old is not None else ""
        if old_zone == zone_key(new.labels):
            return
        if old is not None:
            try:
                self.remove_node(old)
            except CacheError:
                pass  # upstream ignores this error too
        self.add_node(new)

    def zones(self) -> list[str]:
        """Zone keys in first-seen order."""
        return list(self._zones)

    def list(self) -> list[str]:
        """``nodeTree.list``: all node names in zone round-robin order (O(nodes))."""
        zones = self._zones
        if not zones:
            return []
        if len(zones) == 1:
            return list(next(iter(zones.values())))
        cols = [list(names) for names in zones.values()]
        return [n for row in zip_longest(*cols, fillvalue=_MISSING) for n in row if n]

    def __len__(self) -> int:
        return self.num_nodes

    def __contains__(self, node: Node) -> bool:
        names = self._zones.get(zone_key(node.labels))
        return names is not None and node.name in names
