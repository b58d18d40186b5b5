"""The PPO networks (train/networks.py): float32 is sb3-contrib's MlpPolicy itself, and learns bit
for bit as it does, and bfloat16 hidden layers give the same policy to bfloat16 rounding, with the
same parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from skyjo_env.rules import Rules  # noqa: E402
from skyjo_env.sb3_vec_env import SkyjoSB3VecEnv  # noqa: E402
from skyjo_env.train.config import TrainConfig  # noqa: E402
from skyjo_env.train.networks import SkyjoPolicy, bfloat16_supported, resolve_precision  # noqa: E402
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


def test_float32_learns_bit_for_bit_as_sb3_contribs_mlp_policy() -> None:
    """The leaner masked distribution changes no sampled action, no loss input and no gradient:
    two rollouts and their updates end in the same weights."""
    results = []
    for policy in (SkyjoPolicy, "MlpPolicy"):
        learner = model(policy)  # seeds torch: each model samples from the same random draws
        initial = {k: v.clone() for k, v in learner.policy.state_dict().items()}
        learner.learn(2 * 64 * 16)
        buffer = learner.rollout_buffer
        results.append((initial, learner.policy.state_dict(), buffer.actions.copy(), buffer.log_probs.copy()))
    (initial, mine, my_actions, my_log_probs), (_, theirs, their_actions, their_log_probs) = results
    assert np.array_equal(my_actions, their_actions) and np.array_equal(my_log_probs, their_log_probs)
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
    assert not all(torch.equal(mine[k], initial[k]) for k in mine)  # it learned something


def test_the_masked_distribution_is_sb3_contribs() -> None:
    """Entropies, log-probabilities and their gradients equal those of sb3-contrib's distribution,
    deterministic actions its mode, on observations where some actions are masked."""
    learner = model(SkyjoPolicy)
    ours = learner.policy
    observations, masks = batch(learner.env)
    assert not masks.all()
    actions = torch.as_tensor(np.argmax(masks, axis=1))
    mine = ours.evaluate_actions(observations, actions, action_masks=masks)
    theirs = super(SkyjoPolicy, ours).evaluate_actions(observations, actions, action_masks=masks)
    for a, b in zip(mine, theirs):
        assert torch.equal(a, b)
    grads = []
    for values, log_prob, entropy in (mine, theirs):
        ours.zero_grad()
        (values.sum() + log_prob.sum() + entropy.sum()).backward(retain_graph=True)
        grads.append([p.grad.clone() for p in ours.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*grads))
    with torch.no_grad():
        chosen, _, _ = ours(observations, deterministic=True, action_masks=masks)
        mode = ours.get_distribution(observations, action_masks=masks).mode()
    assert torch.equal(chosen, mode) and masks[np.arange(len(masks)), chosen.numpy()].all()


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
