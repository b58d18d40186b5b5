"""Read one observation of the Gymnasium environment with decode."""

import gymnasium

import skyjo_env  # noqa: F401 (registers skyjo_env/Skyjo-v0)
from skyjo_env.actions import FLIP
from skyjo_env.agents.view import CHOOSE, decode

env = gymnasium.make("skyjo_env/Skyjo-v0", seat=0)
obs, info = env.reset(seed=0)
for slot in (0, 5):  # the learner's two setup flips (R5)
    obs, reward, terminated, truncated, info = env.step(FLIP + slot)
view = decode(obs[None])  # a batch of one: shape (1, 38 * 2 + 54)
print(view.phase == CHOOSE)  # the learner's turn: draw or take
print(view.values[0, 0].reshape(3, 4))  # my grid (0 where face down)
print(view.hidden[0, 1].reshape(3, 4))  # the opponent's face-down slots
print(view.discard, view.unseen[0, :3])  # discard top; unseen -2, -1, 0
