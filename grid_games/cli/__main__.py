"""``python -m grid_games.cli``: the ``grid-games`` command."""

from grid_games.cli.main import main

raise SystemExit(main())
