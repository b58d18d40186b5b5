"""The TorchRL view (skyjo_env.torchrl): specs TorchRL checks, shapes, masks, illegal actions, seeds,
opponents, partial resets, and episodes whose rewards match the engine's results (R19, R20)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="the torchrl extra is not installed (pip install -e '.[torchrl]')")

import torch  # noqa: E402
from tensordict import TensorDict  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from skyjo_env import agents  # noqa: E402
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv  # noqa: E402
from skyjo_env.observation import observe  # noqa: E402
from skyjo_env.phases import OVER  # noqa: E402
from skyjo_env.sampling import sample_mask, unpack_bits  # noqa: E402
from skyjo_env.torchrl import SkyjoTorchRLEnv  # noqa: E402


def random_actions(state: TensorDict, rng: np.random.Generator) -> TensorDict:
    """A uniformly random legal action per game, from the state's `action_mask`."""
    return state.set("action", torch.from_numpy(sample_mask(state["action_mask"].numpy(), rng)))


@pytest.mark.parametrize(
    "options",
    [{}, {"num_players": 3, "reward": "score"}, {"player_counts": (2, 3, 4)}, {"obs_type": "padded", "seat": 1}],
    ids=["2p", "3p-score", "mixed", "padded-seat"],
)
def test_check_env_specs_passes(options: dict) -> None:
    env = SkyjoTorchRLEnv(6, seed=0, **options)
    check_env_specs(env, seed=0)


def test_reset_and_step_shapes_and_masks_equal_the_engines() -> None:
    env = SkyjoTorchRLEnv(5, num_players=3, seed=2)
    assert env.batch_size == torch.Size([5])
    state = env.reset()
    assert state["observation"].shape == (5, 3 * 38 + 54) and state["observation"].dtype == torch.float32
    assert state["action_mask"].shape == (5, 26) and state["action_mask"].dtype == torch.bool
    engine = env.games.engine
    assert (engine.current == env.games.seats).all()  # every game waits for its learner
    np.testing.assert_array_equal(state["observation"].numpy(), observe(engine, env.games.seats))
    np.testing.assert_array_equal(state["action_mask"].numpy(), unpack_bits(engine.legal_bits()))
    rng = np.random.default_rng(0)
    for _ in range(200):
        data, state = env.step_and_maybe_reset(random_actions(state, rng))
        nxt = data["next"]
        assert nxt["reward"].shape == (5, 1) and nxt["reward"].dtype == torch.float32
        for key in ("done", "terminated", "truncated"):
            assert nxt[key].shape == (5, 1) and nxt[key].dtype == torch.bool
        done = nxt["done"].squeeze(-1).numpy()
        legal = unpack_bits(engine.legal_bits())
        np.testing.assert_array_equal(nxt["action_mask"].numpy()[~done], legal[~done])
        assert not nxt["action_mask"].numpy()[done].any()  # an ended game has no move left
        np.testing.assert_array_equal(state["action_mask"].numpy(), legal)  # after the partial reset
        np.testing.assert_array_equal(env.action_spec.mask.numpy(), legal)  # the spec's mask follows the games
        np.testing.assert_array_equal(state["observation"].numpy(), observe(engine, env.games.seats))
        assert not state["done"].any()


def test_rollout_with_a_random_masked_policy_ends_games_with_the_engines_results() -> None:
    """`env.rollout` plays random legal moves (the masked action spec); each ended game's last
    reward is the learner's result (R20: +1 a sole win, -1 a loss, 0 a tie at 2 players)."""
    env = SkyjoTorchRLEnv(16, seed=3, reward="result")
    ended_by_step = []
    step = env.games.step

    def spy(actions: np.ndarray, hold: np.ndarray | None = None):  # records what the engine reported
        out = step(actions, hold)
        ended_by_step.append(out[3])
        return out

    env.games.step = spy
    data = env.rollout(400, break_when_any_done=False)
    assert data.shape == (16, 400)
    done = data["next", "done"].squeeze(-1)
    assert int(done.sum()) > 20
    assert (data["next", "terminated"] | data["next", "truncated"]).squeeze(-1).eq(done).all()
    rewards = data["next", "reward"].squeeze(-1)
    for t, ended in enumerate(ended_by_step):
        games = np.flatnonzero(done[:, t].numpy())
        if ended is None:
            assert games.size == 0
            continue
        np.testing.assert_array_equal(ended.games, games)
        np.testing.assert_array_equal(data["next", "observation"][games, t].numpy(), ended.observations)
        totals = ended.totals
        own = totals[np.arange(games.size), ended.seats]
        other = totals[np.arange(games.size), 1 - ended.seats]
        assert (env.games.engine.phase[games] != OVER).all()  # dealt again at once
        expected = np.sign(other - own).astype(np.float32)  # R20: the lowest total wins
        np.testing.assert_array_equal(rewards[games, t].numpy(), expected)
    assert (rewards[~done] == 0).all()  # "result" pays at game ends only


def test_same_games_as_the_gymnasium_vector_env() -> None:
    """Both views step the same games: equal seeds and actions give equal observations, rewards,
    terminations and truncations (R19 ends; max_steps cuts)."""
    options = dict(opponents=[agents.make("threshold"), agents.make("counting")], weights=[1, 3], reward="score")
    trl = SkyjoTorchRLEnv(16, num_players=3, seed=4, max_steps=80, **options)
    gym = SkyjoVectorEnv(16, num_players=3, max_steps=80, **options)
    state = trl.reset()
    obs, info = gym.reset(seed=4)
    np.testing.assert_array_equal(state["observation"].numpy(), obs)
    rng = np.random.default_rng(0)
    terminated = truncated = 0
    for _ in range(300):
        data, state = trl.step_and_maybe_reset(random_actions(state, rng))
        obs, rewards, term, trunc, info = gym.step(data["action"].numpy())
        nxt = data["next"]
        np.testing.assert_array_equal(nxt["reward"].squeeze(-1).numpy(), rewards)
        np.testing.assert_array_equal(nxt["terminated"].squeeze(-1).numpy(), term)
        np.testing.assert_array_equal(nxt["truncated"].squeeze(-1).numpy(), trunc)
        for g in np.flatnonzero(term | trunc):
            np.testing.assert_array_equal(nxt["observation"][g].numpy(), info["final_obs"][g])
        np.testing.assert_array_equal(state["observation"].numpy(), obs)
        np.testing.assert_array_equal(state["action_mask"].numpy(), info["action_mask"])
        terminated += int(term.sum())
        truncated += int(trunc.sum())
    assert terminated > 0 and truncated > 0


def test_an_illegal_action_raises_before_any_game_moves() -> None:
    env = SkyjoTorchRLEnv(4, seed=0)
    state = env.reset()
    mask = state["action_mask"].numpy()
    actions = mask.argmax(axis=1)
    actions[2] = int(np.flatnonzero(~mask[2])[0])
    engine = env.games.engine

    def snapshot() -> list[np.ndarray]:
        return [engine.steps.copy(), engine.current.copy(), *(observe(engine, np.full(4, s)) for s in range(2))]

    before = snapshot()
    with pytest.raises(ValueError, match=r"illegal action \d+ for the learner in game 2 .*legal actions"):
        env.step(state.set("action", torch.from_numpy(actions)))
    for a, b in zip(before, snapshot()):
        np.testing.assert_array_equal(a, b)


def test_a_done_game_must_be_reset_before_it_steps_and_only_done_games_reset_alone() -> None:
    env = SkyjoTorchRLEnv(4, seed=1)
    with pytest.raises(ValueError, match="before reset"):
        env.step(TensorDict({"action": torch.zeros(4, dtype=torch.int64)}, batch_size=[4]))
    state = env.reset()
    rng = np.random.default_rng(0)
    while True:
        data = env.step(random_actions(state, rng))
        if data["next", "done"].any():
            break
        state = data["next"].exclude("reward", "done", "terminated", "truncated")
    done = data["next", "done"].squeeze(-1).numpy()
    with pytest.raises(ValueError, match=r"ended in the last step: reset them first"):
        env.step(data["next"].clone().set("action", torch.zeros(4, dtype=torch.int64)))
    running = torch.from_numpy(~done).unsqueeze(-1)
    with pytest.raises(ValueError, match="that did not end"):
        env.reset(TensorDict({"_reset": running}, batch_size=[4]))
    reset = env.reset(data["next"].clone().set("_reset", data["next", "done"].clone()))
    engine = env.games.engine
    np.testing.assert_array_equal(reset["observation"].numpy(), observe(engine, env.games.seats))
    assert not reset["done"].any()


def test_seeds_replay_the_same_games() -> None:
    def play(env: SkyjoTorchRLEnv) -> list[np.ndarray]:
        rng = np.random.default_rng(5)
        state = env.reset()
        seen = [state["observation"].numpy().copy()]
        for _ in range(150):
            data, state = env.step_and_maybe_reset(random_actions(state, rng))
            seen += [data["next", "observation"].numpy().copy(), data["next", "reward"].numpy().copy()]
        return seen

    first = play(SkyjoTorchRLEnv(6, seed=11, opponents=agents.make("random")))
    again = play(SkyjoTorchRLEnv(6, seed=11, opponents=agents.make("random")))
    env = SkyjoTorchRLEnv(6, opponents=agents.make("random"))
    env.set_seed(11)
    seeded = play(env)
    other = play(SkyjoTorchRLEnv(6, seed=12, opponents=agents.make("random")))
    for a, b, c in zip(first, again, seeded):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert any(not np.array_equal(a, d) for a, d in zip(first, other))


def test_opponents_play_the_other_seats() -> None:
    calls = []
    threshold = agents.make("threshold")

    def opponent(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        calls.append(len(masks))
        return threshold(observations, masks)

    env = SkyjoTorchRLEnv(8, num_players=4, opponents=opponent, seed=0)
    state = env.reset()
    rng = np.random.default_rng(0)
    before = len(calls)
    for _ in range(10):  # (the setup flips, R5, come first)
        data, state = env.step_and_maybe_reset(random_actions(state, rng))
    assert len(calls) > before  # the opponents moved up to every learner's next turn
    # Every action not the learner's was the opponent's: 10 learner actions a game, the rest theirs.
    assert env.games.engine.steps.sum() == 10 * 8 + sum(calls)
    assert (env.games.engine.current == env.games.seats).all()
    other = agents.make("counting")
    env.set_opponents(other)
    assert env.games.opponents == [other]


def test_options_are_the_vector_views() -> None:
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['autoreset_mode'\].*environment options"):
        SkyjoTorchRLEnv(2, autoreset_mode="same_step")
    with pytest.raises(ValueError, match="seat=5 is not allowed"):
        SkyjoTorchRLEnv(2, seat=5)
    vector = dict(inspect.signature(SkyjoVectorEnv).parameters)
    del vector["autoreset_mode"]
    assert inspect.signature(SkyjoTorchRLEnv).parameters == vector  # help() shows EnvOptions' keywords and defaults
    env = SkyjoTorchRLEnv(3, num_players=2, render_mode="rgb_array", seed=0)
    assert env.options.rules.num_players == 2 and env.options.render_mode == "rgb_array"
    env.reset()
    images = env.render()
    assert len(images) == 3 and images[0].ndim == 3


def test_a_collector_with_the_masked_random_policy_plays_legal_moves_across_game_ends() -> None:
    """TorchRL's Collector with `env.rand_action` as its policy (random draws from the action spec,
    whose mask follows the games' legal actions) steps and resets the games: every action was legal
    where it was played. (A `RandomPolicy` copies the spec when built, so its mask would not follow.)"""
    from torchrl.collectors import Collector

    env = SkyjoTorchRLEnv(8, seed=0)
    collector = Collector(env, env.rand_action, frames_per_batch=8 * 100, total_frames=8 * 300)
    ended = 0
    for batch in collector:
        assert batch.shape == (8, 100)
        legal = batch["action_mask"].gather(-1, batch["action"].unsqueeze(-1))
        assert legal.all()
        done = batch["next", "done"].squeeze(-1)
        ended += int(done.sum())
        # After a game ended, the next step starts from the new game's first observation.
        for g, t in done[:, :-1].nonzero().tolist():
            assert not torch.equal(batch["observation"][g, t + 1], batch["next", "observation"][g, t])
            assert not batch["done"][g, t + 1].any()
    collector.shutdown()
    assert ended > 0


@pytest.mark.slow
def test_the_ppo_example_trains_and_plays_a_tournament() -> None:
    """docs/examples/torchrl_ppo.py, one batch: TorchRL's Collector, GAE and ClipPPOLoss run on the env,
    and the actor, wrapped as a numpy policy, plays the project's tournament (the real run: docs)."""
    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "torchrl_ppo.py"
    run = subprocess.run(
        [sys.executable, str(example), "--frames", "16384", "--games", "20", "--eval-every", "1"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "16,384 steps" in run.stdout
    assert run.stdout.count("torchrl-ppo: win rate") == 2  # the evaluation after the batch, then the final one
