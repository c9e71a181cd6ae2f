"""``grid-games play`` in a terminal: a typed line becomes commands and moves.

A line is read, in this order, as

1. a command (``q``/``quit``, ``u``/``undo``, ``r``/``restart``, ``?``/``help``);
2. one move as the game reads it (``4 4`` is Minesweeper's cell at row 4, column 4,
   ``f 4 4`` its flag, ``3,0,3,1`` a Lines98 move);
3. words, each a command or a move (``up up left``, ``4 7``), or a run of one-letter
   keys (``wwdd``), played in turn.

The arrow keys' escape sequences are read as ``up``/``down``/``left``/``right``. A line
with anything the game does not know plays nothing: part of a line never runs.
"""

from __future__ import annotations

from typing import Any, TextIO

import gymnasium as gym

from grid_envs.core.base_env import GridEnv

#: What a terminal sends for the arrow keys (normal and application cursor mode).
ARROWS = {f"\x1b{lead}{code}": name for lead in "[O"
          for code, name in zip("ABCD", ("up", "down", "right", "left"), strict=True)}  # fmt: skip
COMMANDS = {"q": "quit", "quit": "quit", "exit": "quit", "u": "undo", "undo": "undo",
            "r": "restart", "restart": "restart", "?": "help", "help": "help"}  # fmt: skip
HELP = "u undo, r restart, q quit, ? this help"


def legend(base: GridEnv) -> str:
    """The keys of ``base``'s game and the player's commands, for the screen and --help."""
    return f"keys: {base.key_help()}; {HELP}"


def keys_by_game() -> str:
    """Each registered game's keys, for ``grid-games play --help``."""
    from gymnasium.envs.registration import load_env_creator

    import grid_envs

    games: dict[str, list[str]] = {}
    for env_id in grid_envs.ENVS:
        creator = gym.spec(env_id).entry_point
        cls: Any = load_env_creator(creator) if isinstance(creator, str) else creator
        games.setdefault(cls.keys or "an action number", []).append(env_id.split("/")[1])
    lines = [f"  {', '.join(ids)}: {keys}" for keys, ids in games.items()]
    return "\n".join(["keys of each game (an action number works in every game):", *lines,
                      f"commands: {HELP}; the board shows row and column numbers"])  # fmt: skip


def line_keys(base: GridEnv, line: str) -> list[str] | str:
    """The commands and keys ``line`` stands for, in order (each key a text that
    ``base.action_for_key`` reads), or a message naming what is not a key."""
    for sequence, name in ARROWS.items():
        line = line.replace(sequence, f" {name} ")
    text = line.strip()
    if not text:
        return []
    if text.lower() in COMMANDS:
        return [COMMANDS[text.lower()]]
    if base.action_for_key(text) is not None:
        return [text]
    keys: list[str] = []
    for word in text.split():
        if word.lower() in COMMANDS:
            keys.append(COMMANDS[word.lower()])
        elif base.action_for_key(word) is not None:
            keys.append(word)
        elif word.isalpha() and all(
            c.lower() in COMMANDS or base.action_for_key(c) is not None for c in word
        ):
            keys.extend(COMMANDS.get(c.lower(), c) for c in word)
        else:
            return f"{text!r} is not a key of this game as set up (nothing played); {legend(base)}"
    return keys


def labelled(text: str, rows: int, cols: int) -> str:
    """``text`` with row and column numbers around its board, where its first ``rows``
    lines are the board: cells of one or two characters, with a space between cells or
    (one character) without (other layouts, such as the Knight's walls between cells, are
    left as they are)."""
    lines = text.split("\n")
    board = lines[:rows]
    if len(board) < rows:
        return text
    layout = next(
        (
            (w, gap)
            for w, gap in ((1, ""), (1, " "), (2, " "))
            if all(len(b) == cols * (w + len(gap)) - len(gap) for b in board)
            and all(b[w + k * (w + len(gap)) : (k + 1) * (w + len(gap))] == gap
                    for b in board for k in range(cols - 1))
        ),
        None,
    )  # fmt: skip
    if layout is None:
        return text
    w, gap = layout
    width = len(str(rows - 1))
    header = [gap.join(f"{c:>{w}}"[-w:] for c in range(cols))]
    if w == 1 and cols > 10:  # the tens above the units
        header.insert(0, gap.join(str(c // 10 % 10) if c >= 10 else " " for c in range(cols)))
    top = [" " * (width + 1) + h for h in header]
    body = [f"{r:>{width}} {b}" for r, b in enumerate(board)]
    return "\n".join([*top, *body, *lines[rows:]])


def play_terminal(env: gym.Env[Any, Any], base: GridEnv, seed: int | None, stdin: TextIO) -> int:
    """Read lines from ``stdin`` and play them (see the module docstring)."""
    env.reset(seed=seed)
    history: list[tuple[Any, float]] = []
    total = 0.0

    def board() -> str:
        return labelled(base.render_text(), *base.obs_shape)

    print(board())
    print(legend(base))
    for line in stdin:
        keys = line_keys(base, line)
        if isinstance(keys, str):
            print(keys)
            continue
        for key in keys:
            if key == "quit":
                return 0
            if key == "help":
                print(legend(base))
            elif key == "restart":
                env.reset(seed=seed)
                history.clear()
                total = 0.0
            elif key == "undo":
                if history:
                    snap, total = history.pop()
                    base.restore(snap)
            else:
                action = base.action_for_key(key)
                assert action is not None  # line_keys kept only keys the game reads
                history.append((base.snapshot(), total))
                _obs, reward, terminated, truncated, info = env.step(action)
                total += float(reward)
                if info.get("illegal_action"):
                    print(f"{key!r} is not legal here (the state is unchanged)")
                if terminated or truncated:
                    print(board())
                    outcome = "won" if info.get("is_success") else "over"
                    print(f"episode {outcome}: return {total:.2f} in {base.steps} steps "
                          f"(r restarts)")  # fmt: skip
                    history.clear()
                    break
        else:
            if keys and keys != ["help"]:
                print(board())
                print(f"return {total:.2f}  steps {base.steps}")
    return 0
