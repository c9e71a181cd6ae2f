"""MkDocs hook: the reference parts of the pages, written from the code at build time.

A page asks for them with a marker on a line of its own:

- ``<!-- gridgames:ids GAME -->``: the game's registered ids, time limits and kwargs (its
  ``spec.py``) and the agents that play it (the agent registry);
- ``<!-- gridgames:docstring module:Class -->``: a class's docstring (the env's rules,
  spaces, rewards, info keys and arguments), its headings one level down;
- ``<!-- gridgames:cli -->``: ``grid-games --help`` and every command's help, from the parser.

So the docs cannot drift from the code: the build fails if a marker names nothing.

The games' pages come from their specs too: the navigation's Games section lists every
game :func:`grid_envs.game_specs` knows, by its title, and a game whose page
``docs/games/<name>.md`` is not written gets one made of its ids and its env's docstring.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from typing import Any

MARKER = re.compile(r"^<!-- gridgames:(\w+)\s*(\S*)\s*-->$", re.M)
ROLE = re.compile(r":(?:class|meth|func|mod|data|attr|obj):`~?([^`]+)`")


def on_config(config: Any, **_: Any) -> Any:
    """The navigation's Games section (at any depth), from the games' specs."""
    _fill_games(config["nav"])
    return config


def _fill_games(sections: list[Any]) -> None:
    for section in sections:
        if not isinstance(section, dict):
            continue
        for title, below in section.items():
            if title == "Games":
                section[title] = games_nav()
            elif isinstance(below, list):
                _fill_games(below)


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """A page for every game that has no page of its own."""
    from mkdocs.structure.files import File

    import grid_envs

    for spec in grid_envs.game_specs():
        path = f"games/{spec.name}.md"
        if files.get_file_from_path(path) is None:
            files.append(File.generated(config, path, content=game_page(spec)))
    return files


def games_nav() -> list[dict[str, str]]:
    """Each game's title and page, in the order of :data:`grid_envs.GAMES`."""
    import grid_envs

    return [{spec.display_name: f"games/{spec.name}.md"} for spec in grid_envs.game_specs()]


def game_page(spec: Any) -> str:
    """The page of a game without one written: its ids and agents, its env's docstring."""
    return (f"# {spec.display_name}\n\n<!-- gridgames:ids {spec.name} -->\n\n## Reference\n\n"
            f"<!-- gridgames:docstring {spec.ids[0].entry_point} -->\n")  # fmt: skip


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARKER.sub(lambda m: _expand(m.group(1), m.group(2)), markdown)


def _expand(kind: str, arg: str) -> str:
    if kind == "ids":
        return ids_table(arg)
    if kind == "docstring":
        return docstring(arg)
    if kind == "cli":
        return cli_reference()
    raise ValueError(f"unknown gridgames marker {kind!r}")


def ids_table(game: str) -> str:
    """The registered ids of ``game`` and the agents that play them, as Markdown."""
    import agents  # noqa: F401  (registers the agents)
    import grid_envs
    from agents.registry import describe_agent, list_agents

    spec = next((s for s in grid_envs.game_specs() if s.name == game), None)
    if spec is None:
        raise ValueError(f"no game {game!r}; the games are {grid_envs.GAMES}")
    rows = [
        "| id | what | time limit | registered kwargs | native batch |",
        "|---|---|---|---|---|",
    ]
    for i in spec.ids:
        kwargs = ", ".join(f"`{k}={v!r}`" for k, v in i.kwargs.items()) or "-"
        batch = "yes" if i.vector_entry_point else "no (Gymnasium's sync vector env)"
        rows.append(f"| `{i.id}` | {i.summary} | {i.time_limit:,} | {kwargs} | {batch} |")
    rows += ["", "Agents (`grid-games eval ID --agent NAME`, `agents.make_agent(name, env)`):", ""]
    first = spec.ids[0].id
    rows += [f"- `{name}`: {describe_agent(name, first)}" for name in list_agents(first)]
    if spec.potentials:
        names = ", ".join(f"`{n}`" for n in spec.potentials)
        rows += ["", f"Shaping potentials (`--shaping NAME`): {names}."]
    return "\n".join(rows) + "\n"


def docstring(target: str) -> str:
    """The docstring of ``module:Class`` as Markdown: Sphinx roles become code, headings
    go one level down (the page's own ``##`` sections stay above them)."""
    module, _, name = target.partition(":")
    obj = getattr(importlib.import_module(module), name)
    text = inspect.getdoc(obj)
    if not text:
        raise ValueError(f"{target} has no docstring")
    text = ROLE.sub(lambda m: f"``{m.group(1).split('.')[-1]}``", text)
    text = re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)
    return text + "\n"


def cli_reference() -> str:
    """Every command's ``--help``, in the parser's own words."""
    from grid_games.cli import build_parser

    os.environ["COLUMNS"] = "96"
    parser = build_parser()
    out = ["```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in commands(parser).items():
        out += [f"## grid-games {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def commands(parser: Any) -> dict[str, Any]:
    """The sub-parsers of ``grid-games``, by command name."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}
