"""The ``grid-games`` command line: a module per command (:mod:`grid_games.cli.train`, ...),
each registering its handler and its arguments with :func:`grid_games.cli.base.command`;
:mod:`grid_games.cli.main` builds the parser from them and runs one command."""

from grid_games.cli.base import COMMANDS
from grid_games.cli.main import build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
