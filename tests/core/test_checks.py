"""The gate's checks (grid_envs.core.checks): each refuses what a compiled rule must never
see, in one ValueError that names the setting and the value, and passes the rest through
as the type the rules hold."""

from __future__ import annotations

import numpy as np
import pytest

from grid_envs.core import checks


@pytest.mark.parametrize(
    ("value", "message"),
    [(True, "must be an integer"), (2.0, "must be an integer"), ("3", "must be an integer"),
     (2**63, "must be within an int64"), (-1, "must be at least 0"),
     (11, "must be between 0 and 10")],
)  # fmt: skip
def test_an_integer_is_a_whole_number_in_range_and_an_int64(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^rows {message}"):
        checks.integer("rows", value, 0, 10 if value == 11 else None)


def test_an_integer_comes_back_a_python_int() -> None:
    got = checks.integer("rows", np.int16(7), 0, 10)
    assert got == 7 and type(got) is int


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True, "1.0", None])
def test_a_real_is_a_finite_number(value: object) -> None:
    with pytest.raises(ValueError, match=r"^step_reward must be a"):
        checks.real("step_reward", value)
    assert checks.real("step_reward", np.float32(-0.5)) == -0.5


def test_an_array_has_its_shape_dtype_and_range() -> None:
    board = np.zeros((2, 3), dtype=np.int16)
    assert checks.array("board", board, (2, 3), np.int16, 0, 5) is board
    for bad, message in [
        ([[0, 0, 0]], "must be a numpy array, got list"),
        (np.zeros((3, 2), dtype=np.int16), r"must have shape \(2, 3\), got \(3, 2\)"),
        (np.zeros((2, 3), dtype=np.int64), "must be int16, got int64"),
        (np.full((2, 3), 6, dtype=np.int16), "holds 6, above its largest value 5"),
        (np.full((2, 3), -1, dtype=np.int16), "holds -1, below its least value 0"),
    ]:
        with pytest.raises(ValueError, match=f"^board {message}"):
            checks.array("board", bad, (2, 3), np.int16, 0, 5)


def test_a_cell_lies_on_the_board() -> None:
    assert checks.cell("exit", [1, 2], (2, 3)) == (1, 2)
    for bad, message in [((2, 0), "exit's row must be between 0 and 1"),
                         ((0, -1), "exit's column must be between 0 and 2"),
                         ((0,), r"must be a \(row, col\) pair"), ("a1", "pair")]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            checks.cell("exit", bad, (2, 3))


def test_choices_flags_and_sources() -> None:
    assert checks.choice("mode", "fast", ("fast", "optimal")) == "fast"
    with pytest.raises(ValueError, match=r"mode must be one of \('fast', 'optimal'\), got 1"):
        checks.choice("mode", 1, ("fast", "optimal"))
    with pytest.raises(ValueError, match="must be True or False, got 1"):
        checks.flag("gravity", 1)
    with pytest.raises(ValueError, match="levels= and generator= cannot go together"):
        checks.one_of_sources(levels="samples", generator=object())
    checks.one_of_sources(levels=None, generator=object())
