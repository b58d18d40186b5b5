"""The value network's trainer (`skyjo train --backend value`): its positions, its learning, the run folder and
the resume of the run driver."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from skyjo_env import Rules, agents
from skyjo_env.agents.expectimax import ExpectimaxPolicy
from skyjo_env.agents.value_net import FEATURES, ValueNetwork, expected_grid_scores
from skyjo_env.observation import PADDED_SEATS, padded_layout
from skyjo_env.rewards import result_shares
from skyjo_env.train.config import CHECKPOINT, TrainConfig
from skyjo_env.train.value import ValueModel, fit, squared_errors, train
from skyjo_env.train.value_data import play_positions


@pytest.mark.parametrize("players", [2, 5])
def test_positions_carry_each_seats_result_and_round_score_from_the_observers_view(players: int) -> None:
    """Every recorded position's targets: the R20 shares of its game (they sum to 0, one winner's +1 or
    shares of it) and round scores of a whole round (R16/R17: at least minus twice a grid of -2s), on the
    table's seats only, seen from the observer (entry 0 its own)."""
    rules = Rules(num_players=players)
    positions = play_positions(rules, [agents.make("counting", rules=rules)], 24, 0.2, np.random.default_rng(0))
    assert len(positions) > 500 and positions.observations.shape[1:] == (365,)
    seats = positions.seats
    assert seats.sum(axis=1).tolist() == [players] * len(positions) and not seats[:, players:].any()
    assert np.allclose(positions.results.sum(axis=1), 0, atol=1e-5)
    sole_winner = result_shares(np.eye(players, dtype=bool)[:1])[0]  # +1 and -1 / (P - 1)
    assert np.isin(positions.results[:, 0].round(4), np.unique(sole_winner).round(4)).mean() > 0.9  # ties are rare
    assert (positions.rounds[seats] >= -48).all() and (positions.rounds[~seats] == 0).all()
    assert positions.results.shape == positions.rounds.shape == (len(positions), PADDED_SEATS)


def test_branches_value_every_legal_action_of_a_decision_on_one_deal() -> None:
    """A branched decision gives one position per legal action that does not end the game, from the
    deciding seat's view, with the scores of a whole round (R16/R17) as targets and no game result; its
    partner is another action of the same decision. The copies of a decision share the deal: one
    action's copies from the same state, played on by the same deterministic policy, score alike
    (twins), so the same seed gives the same targets."""
    rules = Rules()
    pool = [agents.make("counting", rules=rules)]
    plain = play_positions(rules, pool, 16, 0.2, np.random.default_rng(3))
    both = play_positions(rules, pool, 16, 0.2, np.random.default_rng(3), branch=0.2)
    again = play_positions(rules, pool, 16, 0.2, np.random.default_rng(3), branch=0.2)
    assert np.array_equal(plain.result_seats, plain.seats) and np.array_equal(plain.partner, np.arange(len(plain)))
    branch = np.flatnonzero(~both.result_seats.any(axis=1))
    assert len(branch) > len(both) // 2 and not both.results[branch].any()
    assert (both.seats[branch].sum(axis=1) == 2).all() and (both.rounds[branch][:, 2:] == 0).all()
    assert (both.rounds[branch][:, :2] >= -48).all() and (
        both.rounds[branch][:, :2] == both.rounds[branch][:, :2].round()
    ).all()
    partner = both.partner[branch]
    assert np.isin(partner, branch).all() and (partner != branch).mean() > 0.95
    # A decision's actions differ in what the deciding seat did, not in the game's totals (but where an
    # action ends the round, R15).
    totals = padded_layout()["totals"]
    assert (both.observations[branch][:, totals] == both.observations[partner][:, totals]).all(axis=1).mean() > 0.95
    for field in ("observations", "rounds", "partner"):
        assert np.array_equal(getattr(both, field), getattr(again, field))


def test_bootstrapped_targets_mix_the_networks_round_scores_into_the_rollouts() -> None:
    """With `bootstrap=(network, lam)` a branch's targets are TD(lambda) returns: with lam = 1 the rollouts'
    scores alone; with lam = 0 the network's round scores at the deciding seat's next turn where the round
    goes on that long (an untrained network's: the grids' expected scores, not whole numbers)."""
    rules = Rules()
    pool = [agents.make("counting", rules=rules)]
    network = ValueModel((8,)).to_network()
    mc = play_positions(rules, pool, 8, 0.0, np.random.default_rng(4), branch=0.3)
    same = play_positions(rules, pool, 8, 0.0, np.random.default_rng(4), branch=0.3, bootstrap=(network, 1.0))
    td = play_positions(rules, pool, 8, 0.0, np.random.default_rng(4), branch=0.3, bootstrap=(network, 0.0))
    assert np.array_equal(mc.rounds, same.rounds) and np.array_equal(mc.observations, td.observations)
    differ = (td.rounds[:, :2] != mc.rounds[:, :2]).any(axis=1)
    assert differ.mean() > 0.5 and (td.rounds[differ, :2] != td.rounds[differ, :2].round()).any()


def test_the_round_head_counts_every_card_of_the_grid_from_the_start() -> None:
    """An untrained network's round scores are the grids' expected scores: the face-up cards plus every
    face-down card at the mean of the unseen cards (R16, before any doubling)."""
    rules = Rules()
    positions = play_positions(rules, [agents.make("counting", rules=rules)], 8, 0.1, np.random.default_rng(1))
    silent = ValueModel((16,))
    for layer in silent.layers:
        if hasattr(layer, "weight"):
            layer.weight.data.zero_()
            layer.bias.data.zero_()
    x = positions.observations.astype(np.float32)
    results, rounds = silent.to_network().values(x)
    assert np.array_equal(rounds, expected_grid_scores(x)) and not results.any()


def small(out: Path, **overrides) -> TrainConfig:
    options = dict(players=2, total_timesteps=12_000, num_envs=16, batch_size=256, n_epochs=2, net_arch=[32, 32],
                   learning_rate=3e-3, opponents={"counting": 1.0}, eval_every=0, checkpoint_every=6_000,
                   eval_games=2, final_games=2, eval_opponents=["random"], warm_start=None, out_dir=str(out))  # fmt: skip
    return TrainConfig(**(options | overrides))


def test_the_value_trainer_learns_leaves_its_run_folder_and_resumes(tmp_path: Path) -> None:
    """A tiny run: its network predicts held-out round scores better than the same network untrained; the
    folder holds value.npz (an expectimax agent's network), the checkpoint and the report; a resumed run
    goes on from the checkpoint's positions."""
    out = tmp_path / "run"
    said: list[str] = []
    outcome = train(small(out), progress=False, say=said.append)
    assert said[0].startswith(f"value network {FEATURES} -> 32 -> 32 -> 16") and outcome.timesteps >= 12_000
    network = ValueNetwork.load(out / "value.npz")
    assert network.metadata["positions"] == outcome.timesteps and network.player_counts == (2,)
    rules = Rules()
    held_out = play_positions(rules, [agents.make("counting", rules=rules)], 32, 0.2, np.random.default_rng(9))
    untrained = ValueModel((32, 32)).to_network()
    assert squared_errors(network, held_out)[1] < squared_errors(untrained, held_out)[1]
    assert isinstance(agents.make(f"expectimax:network={out}", players=2), ExpectimaxPolicy)
    assert set(json.loads((out / "results.json").read_text())) == {"final_eval", "tournament"}
    assert json.loads((out / CHECKPOINT / "state.json").read_text())["timesteps"] == outcome.timesteps
    resumed = train(small(out, total_timesteps=outcome.timesteps + 6_000), out / CHECKPOINT, progress=False,
                    say=said.append)  # fmt: skip
    assert (
        resumed.timesteps >= outcome.timesteps + 6_000
        and resumed.run_timesteps == resumed.timesteps - outcome.timesteps
    )
    assert ValueNetwork.load(out / "value.npz").metadata["positions"] == resumed.timesteps


def test_a_batch_of_fewer_positions_than_a_minibatch_is_still_learnt() -> None:
    """The last minibatch of a pass is what is left: a batch smaller than `batch_size` (few games a
    batch) moves the network, where whole minibatches alone would have learnt nothing."""
    rules = Rules()
    positions = play_positions(rules, [agents.make("counting", rules=rules)], 2, 0.5, np.random.default_rng(3))
    model = ValueModel((16,))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = [p.detach().clone() for p in model.parameters()]
    loss = fit(model, optimizer, positions, batch_size=10 * len(positions), epochs=1, rng=np.random.default_rng(0))
    assert np.isfinite(loss) and all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
