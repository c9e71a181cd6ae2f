"""The networks: the grid CNN and its torch helpers (:mod:`agents.nets.common`), the
board networks that read the actions off the board (:mod:`agents.nets.board`), and the
names ``grid-games train --policy`` takes (:mod:`agents.nets.registry`). A new network goes
in :mod:`agents.nets.board` (or a module beside it) and is named with
:func:`agents.nets.registry.register_policy` in its game's :mod:`agents.games` module."""
