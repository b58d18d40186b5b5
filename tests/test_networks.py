"""The PPO networks (train/networks.py): float32 is sb3-contrib's MlpPolicy itself, and learns as it
does to float32 rounding, and bfloat16 hidden layers give the same policy to bfloat16 rounding, with the
same parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.distributions import MaskableCategorical  # noqa: E402
from stable_baselines3.common.logger import configure  # noqa: E402

from skyjo_env.rules import Rules  # noqa: E402
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.networks import SkyjoPolicy, bfloat16_supported, masked_distribution, resolve_precision  # noqa: E402
from skyjo_env.train.ppo import Run  # noqa: E402


def model(policy, seed: int = 0, **policy_kwargs) -> MaskablePPO:
    env = SkyjoSB3VecEnv(64, Rules(), seed=seed)
    return MaskablePPO(policy, env, n_steps=16, batch_size=256, seed=seed,
                       policy_kwargs={"net_arch": [64, 64], **policy_kwargs})  # fmt: skip


def batch(env: SkyjoSB3VecEnv) -> tuple[torch.Tensor, np.ndarray]:
    return torch.as_tensor(env.reset()), env.action_masks()


def outputs(policy: SkyjoPolicy, observations: torch.Tensor, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with torch.no_grad():
        probs = policy.get_distribution(observations, action_masks=masks).distribution.probs
        values = policy.predict_values(observations)
    return probs.numpy(), values.numpy()


def test_float32_is_sb3_contribs_mlp_policy() -> None:
    ours, theirs = model(SkyjoPolicy), model("MlpPolicy")
    mine, other = ours.policy.state_dict(), theirs.policy.state_dict()
    assert mine.keys() == other.keys() and all(torch.equal(mine[k], other[k]) for k in mine)
    observations, masks = batch(ours.env)
    for a, b in zip(outputs(ours.policy, observations, masks), outputs(theirs.policy, observations, masks)):
        assert np.array_equal(a, b)


def test_the_masked_distribution_is_sb3_contribs_to_rounding() -> None:
    """Log-probabilities, entropies and their gradients agree with sb3-contrib's distribution on
    observations where some actions are masked; deterministic actions are its mode."""
    learner = model(SkyjoPolicy)
    ours = learner.policy
    observations, masks = batch(learner.env)
    assert not masks.all()
    actions = torch.as_tensor(np.argmax(masks, axis=1))
    mine = ours.evaluate_actions(observations, actions, action_masks=masks)
    theirs = super(SkyjoPolicy, ours).evaluate_actions(observations, actions, action_masks=masks)
    assert torch.equal(mine[0], theirs[0])  # the same value network
    for a, b in zip(mine[1:], theirs[1:]):
        assert not torch.equal(a, b) and torch.allclose(a, b, rtol=0, atol=1e-5)  # rounding only
    grads = []
    for values, log_prob, entropy in (mine, theirs):
        ours.zero_grad()
        (values.sum() + log_prob.sum() + entropy.sum()).backward(retain_graph=True)
        grads.append([p.grad.clone() for p in ours.parameters()])
    assert all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(*grads))
    with torch.no_grad():
        chosen, _, _ = ours(observations, deterministic=True, action_masks=masks)
        mode = ours.get_distribution(observations, action_masks=masks).mode()
    assert torch.equal(chosen, mode) and masks[np.arange(len(masks)), chosen.numpy()].all()


def test_sampling_never_draws_a_masked_action_and_draws_as_categorical() -> None:
    ours = model(SkyjoPolicy).policy
    logits = torch.randn(512, 26) * 30  # masked actions would often be the likeliest
    masks = torch.rand(512, 26) < 0.3
    masks[:, 5] = True
    log_probs, probs = masked_distribution(logits, masks)
    assert torch.all(probs[~masks] == 0) and torch.isfinite(log_probs).all()
    assert torch.allclose(probs.sum(-1), torch.ones(512))
    reference = MaskableCategorical(logits=logits, masks=masks)
    assert torch.allclose(probs, reference.probs, atol=1e-6)
    torch.manual_seed(1)
    drawn = torch.multinomial(probs, 1, True).T.reshape(-1)
    torch.manual_seed(1)
    assert torch.equal(drawn, reference.sample())  # the same draws from the same random numbers
    with pytest.raises(ValueError, match="no legal action"):
        ours(torch.zeros(2, ours.observation_space.shape[0]), action_masks=np.zeros((2, 26), dtype=bool))


def test_an_update_gives_sb3_contribs_weights_to_rounding() -> None:
    """One rollout played by sb3-contrib's MlpPolicy, then fitted from the same initial weights in
    the same minibatch order by MlpPolicy and by SkyjoPolicy: the weights agree to rounding (the
    leaner distribution, fused Adam), within a ten-thousandth of how far the update moved them."""
    player = model("MlpPolicy")
    player.learn(64 * 16)  # the buffer keeps the rollout
    fitted = []
    for policy in ("MlpPolicy", SkyjoPolicy):
        learner = model(policy)  # the initial weights, the same for both
        initial = {k: v.clone() for k, v in learner.policy.state_dict().items()}
        learner.rollout_buffer = player.rollout_buffer
        learner.set_logger(configure(None, []))
        np.random.seed(0)  # the minibatch order
        learner.train()
        fitted.append(learner.policy.state_dict())
    exact, mine = fitted
    assert learner.policy.optimizer.defaults["eps"] == player.policy.optimizer.defaults["eps"] == 1e-5
    for k in mine:
        moved = (exact[k] - initial[k]).abs().max()
        assert moved > 0 and (mine[k] - exact[k]).abs().max() <= 1e-4 * moved, k


def test_bfloat16_hidden_layers_give_the_float32_policy_to_rounding() -> None:
    exact, rounded = model(SkyjoPolicy), model(SkyjoPolicy, precision="bfloat16")
    assert exact.policy.state_dict().keys() == rounded.policy.state_dict().keys()  # snapshots, checkpoints
    rounded.policy.load_state_dict(exact.policy.state_dict())
    observations, masks = batch(exact.env)
    (p32, v32), (p16, v16) = outputs(exact.policy, observations, masks), outputs(rounded.policy, observations, masks)
    assert p16.dtype == v16.dtype == np.float32
    assert not np.array_equal(p16, p32)  # bfloat16 really ran
    assert np.abs(p16 - p32).max() < 0.01 and np.abs(v16 - v32).max() < 0.01 * max(1.0, np.abs(v32).max())
    assert np.array_equal(p16 > 0, p32 > 0)  # the same actions are legal: the mask is applied in float32


def test_bfloat16_gradients_reach_every_parameter_in_float32() -> None:
    rounded = model(SkyjoPolicy, precision="bfloat16")
    observations, masks = batch(rounded.env)
    actions = torch.as_tensor(np.argmax(masks, axis=1))
    values, log_prob, _ = rounded.policy.evaluate_actions(observations, actions, action_masks=masks)
    (values.sum() - log_prob.sum()).backward()
    for name, parameter in rounded.policy.named_parameters():
        assert parameter.dtype == torch.float32 and parameter.grad is not None, name
        assert parameter.grad.dtype == torch.float32 and parameter.grad.abs().sum() > 0, name


def test_auto_takes_bfloat16_where_the_processor_has_it() -> None:
    assert resolve_precision("auto") == ("bfloat16" if bfloat16_supported() else "float32")
    assert resolve_precision("float32") == "float32" and resolve_precision("bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="precision='float16'.*'float32' or 'bfloat16'"):
        model(SkyjoPolicy, precision="float16")
    with pytest.raises(ValueError, match="precision"):
        TrainConfig(precision="float16")  # type: ignore[arg-type]


def test_a_run_resumes_in_another_precision_with_its_weights(tmp_path: Path) -> None:
    options = dict(total_timesteps=2048, num_envs=32, n_steps=32, batch_size=256, net_arch=[32, 32],
                   opponents={"random": 1.0}, eval_every=0, checkpoint_every=0, warm_start=None, advice=None,
                   out_dir=str(tmp_path))  # fmt: skip
    first = Run(TrainConfig(precision="float32", **options), say=lambda line: None)
    first.learn()
    resumed = Run(TrainConfig(precision="bfloat16", **{**options, "total_timesteps": 4096}),
                  resume=tmp_path / "checkpoint", say=lambda line: None)  # fmt: skip
    assert first.model.policy.precision == "float32" and resumed.model.policy.precision == "bfloat16"
    before, after = first.model.policy.state_dict(), resumed.model.policy.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    resumed.learn()
    assert resumed.model.num_timesteps >= 4096
