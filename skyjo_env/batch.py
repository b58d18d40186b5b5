"""A batch's state arrays: declared once, and reached fast (speed devices only, no rules here).

[`StateField`][] declares one state array in the annotations of the class that holds a batch of
games: `values: Annotated[np.ndarray, StateField(np.int8, PLAYERS, SLOTS)]` says that each
instance holds an array `values` of shape `(B, P, 12)`, one row per game. [`state_fields()`][state_fields]
lists a class's declarations, the one list of its state, from which its arrays are made, exported
and loaded. (An annotation, not a class attribute: reading an instance attribute that shadows a
class attribute is slower.)

[`Batch`][] reaches the rows of those arrays. numpy's cost per call dominates small batches and
a gather copies what a view need not in large ones, so it keeps three devices out of the rules:

* the games a rule works on are an index array, and the very array [`Batch.all`][Batch.all] stands for
  every game: recognised by identity, it gets a slice (a view) from [`Batch.rows()`][Batch.rows], indices
  made once from [`Batch.flat_index()`][Batch.flat_index], and no gather from [`Batch.select()`][Batch.select];
* [`Batch.flat`][Batch.flat] holds every array flattened (a view): one 1-D gather at
  [`Batch.flat_index()`][Batch.flat_index] is cheaper than a gather over several axes;
* [`Batch.take()`][Batch.take], [`Batch.put()`][Batch.put] and [`Batch.fill()`][Batch.fill] move each game's row as one item,
  several times cheaper than moving its elements one by one.

A [`Batch`][] holds views of the arrays it was made from; a copy of it (`copy.deepcopy`,
pickle) makes them anew over the copied arrays, so that it goes on sharing their memory.
"""

from __future__ import annotations

import functools
import typing

import numpy as np

from skyjo_env.arrays import row_item, row_items

PLAYERS = -1
"""In a [`StateField`][]'s shape: one entry per player."""

_EVERY = slice(None)


class StateField:
    """A state array: `(B, *shape)` of `dtype`, one row per game, made by [`new()`][new].

    Args:
        dtype: the array's dtype.
        shape: its shape per game, [`PLAYERS`][] standing for the number of players.
        derived: the array is computed from the others; it is neither loaded nor exported.
        name: the attribute that holds it ([`state_fields()`][state_fields] names each declaration).
    """

    def __init__(self, dtype: type[np.generic], *shape: int, derived: bool = False, name: str = "") -> None:
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.derived = derived
        self.name = name

    def new(self, batch_size: int, players: int) -> np.ndarray:
        """A zeroed array for `batch_size` games of `players` players."""
        return np.zeros((batch_size, *(players if n == PLAYERS else n for n in self.shape)), dtype=self.dtype)


def state_fields(cls: type) -> tuple[StateField, ...]:
    """The state fields that `cls` declares (`name: Annotated[np.ndarray, StateField(...)]`), in
    their order."""
    return tuple(
        StateField(spec.dtype.type, *spec.shape, derived=spec.derived, name=name)
        for name, hint in typing.get_type_hints(cls, include_extras=True).items()
        for spec in getattr(hint, "__metadata__", ())
        if isinstance(spec, StateField)
    )


class Batch:
    """Fast ways to the rows of a batch's state arrays (see the module docstring).

    `games` arguments are 1-D index arrays of distinct games, or [`all`][] itself for every game.

    Args:
        arrays: the state arrays by name, each C-contiguous with one row per game.
    """

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        size = len(next(iter(arrays.values())))
        self.arrays = arrays
        """The state arrays, by name."""
        self.all = np.arange(size)
        """The indices `0..B-1` (read-only); this very array stands for every game."""
        self.flat = {name: array.reshape(-1) for name, array in arrays.items()}
        """Each state array flattened, a view: `flat[name][flat_index(name, games, k)]` is element
        `k` of each game's row of `name`."""
        self.all.setflags(write=False)
        self._items = {name: row_items(array.reshape(size, -1)) for name, array in arrays.items()}
        self._stride = {name: _zero_d(array[0].size) for name, array in arrays.items()}  # elements per game
        # Made when first asked for, by name: flat_index of every game by element, and a row of
        # one value as an item by the value.
        self._all_index: dict[str, dict[int, np.ndarray]] = {name: {} for name in arrays}
        self._fills: dict[str, dict[int, np.void]] = {name: {} for name in arrays}

    def __reduce__(self) -> tuple[type[Batch], tuple[dict[str, np.ndarray]]]:
        """A copy is made anew from (copies of) the arrays, its views over them."""
        return Batch, (self.arrays,)

    def rows(self, games: np.ndarray) -> np.ndarray | slice:
        """Index of `games` into the arrays: a slice (no gather) for [`all`][]."""
        return _EVERY if games is self.all else games

    def select(self, games: np.ndarray, flags: np.ndarray) -> np.ndarray:
        """`games[flags]` (1-D `flags`), by the flags' indices: numpy's boolean indexing is slow
        when many are set."""
        found = flags.nonzero()[0]  # (the method is cheaper than np.flatnonzero)
        return found if games is self.all else games.take(found)

    def flat_index(self, name: str, games: np.ndarray, element: int = 0) -> np.ndarray:
        """Where element `element` of each game's row of `name` is in `flat[name]` (read-only
        and made once for [`all`][])."""
        if games is self.all:
            made = self._all_index[name]
            if element not in made:
                made[element] = self.flat_index(name, self.all.copy(), element)
                made[element].setflags(write=False)
            return made[element]
        # (0-d operands: numpy converts a Python int operand on every call, which costs few games dearly.)
        index = games * self._stride[name]
        return index + _zero_d(element) if element else index

    def take(self, name: str, games: np.ndarray) -> np.ndarray:
        """The rows `games` of `arrays[name]`, gathered as one item per game."""
        array = self.arrays[name]
        return self._items[name][games].view(array.dtype).reshape((games.size,) + array.shape[1:])

    def put(self, name: str, games: np.ndarray, rows: np.ndarray) -> None:
        """Write `rows` into the rows `games` of `arrays[name]`, scattered as one item per game (`rows`: a row per game,
        each contiguous, or already one item each as from [`row_items()`][skyjo_env.arrays.row_items])."""
        items = self._items[name]
        items[games] = rows.reshape(games.size, -1).view(items.dtype).reshape(games.size)

    def fill(self, name: str, games: np.ndarray, value: int) -> None:
        """Set the rows `games` of `arrays[name]` to `value`, as one item per game."""
        fills = self._fills[name]
        if value not in fills:
            array = self.arrays[name]
            fills[value] = row_item(np.full(array.shape[1:], value, dtype=array.dtype))
        self._items[name][games] = fills[value]


@functools.cache
def _zero_d(value: int) -> np.ndarray:
    """`value` as a read-only 0-d array of `intp`."""
    array = np.array(value, dtype=np.intp)
    array.setflags(write=False)
    return array
