"""The Gymnasium VectorEnv view: make_vec, batched spaces, same-step autoreset, masks in infos, errors."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import skyjo_env  # noqa: F401  (registers the ids)
from skyjo_env import Rules, agents
from skyjo_env.engine import OVER
from skyjo_env.gymnasium_vector_env import SkyjoVectorEnv
from skyjo_env.observation import layout, observe
from skyjo_env.sampling import sample_mask
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv


def test_make_vec_builds_one_batched_env_with_batched_spaces():
    env = gymnasium.make_vec("skyjo_env/Skyjo-v0", num_envs=6, num_players=3, reward="score")
    assert isinstance(env, SkyjoVectorEnv) and env.num_envs == 6
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (3 * 38 + 54,) and env.single_action_space.n == 26
    assert env.observation_space.shape == (6, 3 * 38 + 54)
    assert env.action_space.shape == (6,) and (env.action_space.nvec == 26).all()
    obs, info = env.reset(seed=1)
    assert obs in env.observation_space
    np.testing.assert_array_equal(info["action_mask"], env.action_masks())
    engine = env.games.engine
    assert (engine.current == env.games.seats).all()  # every game waits for its learner (R5 setup flips first)
    np.testing.assert_array_equal(obs, observe(engine, env.games.seats))


def test_sync_mode_still_vectorises_the_single_agent_env():
    env = gymnasium.make_vec("skyjo_env/Skyjo-v0", num_envs=2, vectorization_mode="sync")
    assert isinstance(env, SyncVectorEnv)
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 2 * 38 + 54) and info["action_mask"].shape == (2, 26)


def test_same_games_as_the_sb3_vec_env_with_terminations_and_truncations_apart():
    """Both views step the same LearnerGames: equal seeds and actions give equal results (R19 ends, max_steps cuts)."""
    options = dict(
        opponents=[agents.make("threshold"), agents.make("counting")], weights=[1, 3], reward="score", max_steps=80
    )
    gym_env = SkyjoVectorEnv(16, num_players=3, **options)
    sb3_env = SkyjoSB3VecEnv(16, Rules(num_players=3), **options)
    sb3_env.seed(4)
    obs_g, info = gym_env.reset(seed=4)
    np.testing.assert_array_equal(obs_g, sb3_env.reset())
    rng = np.random.default_rng(0)
    terminated = truncated = 0
    for _ in range(300):
        actions = sample_mask(info["action_mask"], rng)
        obs_g, rew_g, term, trunc, info = gym_env.step(actions)
        obs_s, rew_s, dones, infos = sb3_env.step(actions)
        np.testing.assert_array_equal(obs_g, obs_s)
        np.testing.assert_array_equal(rew_g, rew_s)
        np.testing.assert_array_equal(term | trunc, dones)
        assert not (term & trunc).any()
        np.testing.assert_array_equal(info["action_mask"], sb3_env.action_masks())
        for g in np.flatnonzero(dones):
            assert trunc[g] == infos[g].get("TimeLimit.truncated", False)
            np.testing.assert_array_equal(info["final_obs"][g], infos[g]["terminal_observation"])
            assert info["final_info"]["opponent"][g] is infos[g]["opponent"]
        if dones.any():
            assert info["_final_obs"].tolist() == dones.tolist()
            assert all(info["final_obs"][g] is None for g in np.flatnonzero(~dones))
        else:
            assert "final_obs" not in info
        terminated += int(term.sum())
        truncated += int(trunc.sum())
    assert terminated > 0 and truncated > 0


def test_final_observation_is_the_ended_game_and_the_new_game_starts():
    env = SkyjoVectorEnv(32, reward="result")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(1)
    L = layout(2)
    seen = 0
    while seen < 5:
        obs, rewards, term, trunc, info = env.step(sample_mask(info["action_mask"], rng))
        for g in np.flatnonzero(term):
            seen += 1
            final = info["final_obs"][g]
            assert final[L["phase"]].sum() == 0  # the game is over: no phase column (R19)
            assert rewards[g] in (-1.0, 1.0, 0.0)  # result reward at the game's end
            assert info["final_info"]["seat"][g] in (0, 1)
            assert obs[g][L["totals"]].tolist() == [0.0, 0.0]  # the new game has no points yet
    assert (env.games.engine.phase != OVER).all()


def test_record_episode_statistics_counts_every_episode():
    env = RecordEpisodeStatistics(SkyjoVectorEnv(8, reward="score"))
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    episodes = 0
    returns = np.zeros(8)
    for _ in range(400):
        obs, rewards, term, trunc, info = env.step(sample_mask(info["action_mask"], rng))
        returns += rewards
        done = term | trunc
        if done.any():
            np.testing.assert_allclose(info["episode"]["r"][done], returns[done], rtol=1e-5)
            returns[done] = 0
            episodes += int(done.sum())
    assert episodes > 0


def test_rgb_render_gives_one_image_per_game():
    env = SkyjoVectorEnv(3, render_mode="rgb_array")
    env.reset(seed=0)
    images = env.render()
    assert len(images) == 3 and all(i.ndim == 3 and i.shape[2] == 3 and i.dtype == np.uint8 for i in images)


def test_bad_input_raises_clear_errors():
    env = SkyjoVectorEnv(4)
    with pytest.raises(ValueError, match="step\\(\\) before reset\\(\\)"):
        env.step(np.zeros(4, dtype=np.int64))
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 0 for the learner in game 0 .*legal actions: \['flip 0'"):
        env.step(np.zeros(4, dtype=np.int64))  # setup: only flips are legal (R5)
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])  # nothing moved
    with pytest.raises(ValueError, match="4 integer action ids"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="one integer"):
        env.reset(seed=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="reset options"):
        env.reset(options={"x": 1})
    with pytest.raises(ValueError, match="unknown option.*environment options are"):
        SkyjoVectorEnv(4, illegal_action="raise")
    with pytest.raises(ValueError, match="render_mode='human' is not allowed"):
        SkyjoVectorEnv(4, render_mode="human")
    with pytest.raises(ValueError, match="seat=5 is not allowed"):
        SkyjoVectorEnv(4, seat=5)


def test_next_step_autoreset_plays_the_same_games_with_a_held_step_between_them():
    """autoreset_mode="next_step" (Gymnasium's default, RLlib's EnvRunners'): a game that ends returns
    its last observation, the next step ignores its action and returns the new game's first one
    (reward 0, not done), and the games are those of same-step autoreset, step for step (R19)."""
    N = 16
    same = SkyjoVectorEnv(N, reward="score", seed=3, opponents=agents.make("counting"))
    nxt = SkyjoVectorEnv(N, reward="score", seed=3, opponents=agents.make("counting"), autoreset_mode="next_step")
    assert nxt.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    policy = agents.make("counting")

    def episodes(env: SkyjoVectorEnv, steps: int) -> list[list[list[tuple[float, bool]]]]:
        obs, info = env.reset()
        log: list[list[list[tuple[float, bool]]]] = [[[]] for _ in range(N)]
        held = np.zeros(N, dtype=bool)
        for _ in range(steps):
            masks = np.where(held[:, None], True, info["action_mask"])  # held games: any action is ignored
            obs, rewards, terminated, truncated, info = env.step(policy(obs, masks))
            done = terminated | truncated
            for g in range(N):
                if held[g]:
                    assert rewards[g] == 0 and not done[g]
                    continue
                log[g][-1].append((float(rewards[g]), bool(done[g])))
                if done[g]:
                    log[g].append([])
            held = done & env.next_step
            assert not info["action_mask"][held].any()  # a game's last observation has no legal action
        return log

    a, b = episodes(same, 400), episodes(nxt, 500)
    compared = 0
    for game_a, game_b in zip(a, b):
        for ep_a, ep_b in zip(game_a[:-1], game_b[:-1]):
            assert ep_a == ep_b
            compared += 1
    assert compared >= 10


def test_an_unknown_autoreset_mode_is_refused():
    with pytest.raises(ValueError, match="autoreset_mode='later'.*same_step.*next_step"):
        SkyjoVectorEnv(2, autoreset_mode="later")
