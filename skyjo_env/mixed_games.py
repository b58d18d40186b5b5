"""Games at tables of several player counts for one learner, in one batch: mixed-table training.

[`MixedLearnerGames`][] splits its N games among the player counts it is given (as evenly as
they divide: the first `N % k` counts get one game more) and keeps one
[`LearnerGames`][] per count, each with its own engine. Every game keeps
its count: a game that ends is dealt again at the same table size, so the counts' share of the
batch is fixed, and a count's share of the learner's turns follows it. The learner's observations
are padded ones ([`skyjo_env.observation`][]), the same layout at every count, so one network
plays them all; opponents get table observations of their own table, as in every view.

It has the methods of [`LearnerGames`][] that the vector views call (`reset`, `step`,
`action_masks`, `set_opponents`, ...), with game indices running over the counts in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from skyjo_env.env_options import EnvOptions
from skyjo_env.learner_games import ANY_ACTION, Ended, LearnerGames, Opponents, checked_learner_actions
from skyjo_env.observation import PADDED_SEATS, PLAYER_COUNTS, count_range
from skyjo_env.rules import Rules


def check_player_counts(counts: Any) -> tuple[int, ...]:
    """`counts` (player counts 2..8, each once) as a sorted tuple; `ValueError` naming the problem."""
    values = list(counts) if isinstance(counts, (list, tuple, range)) else None
    if not values or any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) for p in values):
        raise ValueError(f"player counts must be a non-empty list of integers 2..8, got {counts!r}")
    if any(p not in PLAYER_COUNTS for p in values) or len(set(values)) != len(values):
        raise ValueError(f"player counts {values} are not allowed; use distinct counts from 2 to 8")
    return tuple(sorted(int(p) for p in values))


class MixedLearnerGames:
    """`num_games` games for one learner at tables of `player_counts` players; see the module docstring.

    Args:
        num_games: number of games N, at least one per count.
        rules: the rule options besides the player count (its `num_players` is ignored).
        player_counts: the table sizes, 2..8.
        seed: seeds each count's games (through a seed derived from it and the count).
        options: the other options of [`LearnerGames`][] (`opponents`, `weights`,
            `reward`, `reward_scale`, `max_steps`); an opponent may be a factory, built
            with each count's rules. `seat` and `obs_type` are not options: seats are drawn
            at random and observations are padded.
    """

    def __init__(
        self,
        num_games: int,
        rules: Rules | None,
        player_counts: Sequence[int],
        *,
        seed: int | None = None,
        **options: Any,
    ) -> None:
        self.player_counts = counts = check_player_counts(player_counts)
        if isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < len(counts):
            raise ValueError(
                f"num_games={num_games!r} is not allowed; use at least one game per player count ({len(counts)})"
            )
        for name in ("seat", "obs_type", "restart"):
            if name in options:
                raise ValueError(f"{name!r} is not an option of mixed tables (random seats, padded observations)")
        base = Rules() if rules is None else rules
        shares = [len(part) for part in np.array_split(np.arange(num_games), len(counts))]
        self.parts = [
            LearnerGames(n, base.replace(num_players=P), seed=_part_seed(seed, P), obs_type="padded", **options)
            for n, P in zip(shares, counts)
        ]
        self.rules = base
        self.obs_type = "padded"  #: the learner's observations
        self.num_games = num_games
        self.offsets = np.cumsum([0, *shares])  #: game index of each count's first game
        #: The player count of each game.
        self.players = np.repeat(np.array(counts), shares)
        self.players.setflags(write=False)

    def __repr__(self) -> str:
        return f"MixedLearnerGames({self.num_games} games at {count_range(self.player_counts)} players)"

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat in each game."""
        return np.concatenate([part.seats for part in self.parts])

    @property
    def opponents(self) -> list[Any]:
        """The entries drawn for games that start from now on (those of the first count's games)."""
        return self.parts[0].opponents

    @property
    def game_opponents(self) -> list[Any]:
        """The entry playing the opponent seats of each game."""
        return [entry for part in self.parts for entry in part.game_opponents]

    def set_opponents(
        self, opponents: Opponents | Sequence[Opponents] | None, weights: Sequence[float] | None = None
    ) -> None:
        """As [`LearnerGames.set_opponents()`][LearnerGames.set_opponents], for the games of every count."""
        for part in self.parts:
            part.set_opponents(opponents, weights)

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Deal new games everywhere (re-seeded if `seed` is given); the learners' padded observations."""
        return np.concatenate([part.reset(_part_seed(seed, P)) for part, P in zip(self.parts, self.player_counts)])

    def step(
        self, actions: np.ndarray, hold: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Ended | None]:
        """As [`LearnerGames.step()`][LearnerGames.step]; `Ended.totals` has [`PADDED_SEATS`][] columns, 0 past a
        game's own seats. Every action is checked, once, before any game moves."""
        bits = self.legal_bits() if hold is None else np.where(hold, np.uint32(ANY_ACTION), self.legal_bits())
        a = checked_learner_actions(actions, bits, self.seats, self.players)
        results = [
            part.play(a[start : start + part.num_games], None if hold is None else hold[start : start + part.num_games])
            for part, start in zip(self.parts, self.offsets)
        ]
        observations, rewards, dones = (np.concatenate([r[i] for r in results]) for i in range(3))
        return observations, rewards, dones, self._merged([r[3] for r in results])

    def legal_bits(self) -> np.ndarray:
        """The learners' legal actions as `(N,)` bit sets."""
        return np.concatenate([part.legal_bits() for part in self.parts])

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, `(N, 26)` booleans."""
        return np.concatenate([part.action_masks() for part in self.parts])

    def images(self) -> list[np.ndarray]:
        """An RGB image of every game, each from its learner's view."""
        return [image for part in self.parts for image in part.images()]

    def _merged(self, ended: list[Ended | None]) -> Ended | None:
        """The ended games of every count as one [`Ended`][], with batch-wide game indices."""
        parts = [(e, start) for e, start in zip(ended, self.offsets) if e is not None]
        if not parts:
            return None
        totals = [np.pad(e.totals, ((0, 0), (0, PADDED_SEATS - e.totals.shape[1]))) for e, _ in parts]
        return Ended(
            games=np.concatenate([e.games + start for e, start in parts]),
            observations=np.concatenate([e.observations for e, _ in parts]),
            truncated=np.concatenate([e.truncated for e, _ in parts]),
            seats=np.concatenate([e.seats for e, _ in parts]),
            totals=np.concatenate(totals),
            won=np.concatenate([e.won for e, _ in parts]),
            opponents=[o for e, _ in parts for o in e.opponents],
        )


def _part_seed(seed: int | None, players: int) -> int | None:
    """The seed of one count's games: derived from the batch's seed and the count."""
    return None if seed is None else int(np.random.SeedSequence([seed, players]).generate_state(1)[0])


def vector_games(num_games: int, options: EnvOptions) -> LearnerGames | MixedLearnerGames:
    """The games of a vector view of `options`: [`LearnerGames`][] at one table size (`obs_type`
    default `"table"`), or, with `player_counts`, [`MixedLearnerGames`][] (padded observations and
    random seats: `obs_type` other than `"padded"` and `seat` are refused)."""
    o = options
    shared = {"opponents": o.opponents, "weights": o.weights, "reward": o.reward, "reward_scale": o.reward_scale,
              "max_steps": o.max_steps, "seed": o.seed}  # fmt: skip
    if o.player_counts is None:
        return LearnerGames(num_games, o.rules, seat=o.seat, obs_type=o.table_obs_type, **shared)
    if o.obs_type not in (None, "padded") or o.seat is not None:
        raise ValueError(
            f"mixed tables (player_counts={o.player_counts!r}) have padded observations and random seats: "
            f"leave out obs_type={o.obs_type!r} and seat={o.seat!r}"
        )
    return MixedLearnerGames(num_games, o.rules, o.player_counts, **shared)
