"""The ``grid-games`` command: the one package that uses both the games (:mod:`grid_envs`)
and the agents (:mod:`agents`). Each command parses its arguments, calls the library and
prints; the work is done in the library."""
