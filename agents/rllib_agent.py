"""An RLlib checkpoint as a batched :class:`~skyjo_env.agents.base.Policy`, to play in tournaments.

Loads the RLModule that :mod:`skyjo_env.train.rllib_ppo` trained (``RLModule.from_checkpoint``) and plays
it with torch in batch: one forward pass over all N observations, then the best legal action
(masked argmax), or a sample from the masked softmax with ``greedy=False``. Needs the
``distributed`` extra (``ray[rllib]``). A checkpoint holds pickles: load only trusted ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from skyjo_env.train.rllib_module import MAIN

#: Where an Algorithm checkpoint keeps its RLModules, one folder per module id.
MODULES_DIR = Path("learner_group") / "learner" / "rl_module"
#: The file every RLlib checkpoint folder (Algorithm or RLModule) starts with.
CTOR_FILE = "class_and_ctor_args.pkl"


def module_path(checkpoint: str | Path, module_id: str = MAIN) -> Path:
    """The RLModule folder of ``module_id`` for ``checkpoint``.

    ``checkpoint`` may be an RLModule checkpoint itself, an Algorithm checkpoint
    (``Algorithm.save_to_path``) or a :mod:`skyjo_env.train.rllib_ppo` output folder (holding
    ``checkpoint/``). Raises ``FileNotFoundError`` saying what was looked for.
    """
    path = Path(checkpoint)
    if not path.is_dir():
        raise FileNotFoundError(f"RLlib checkpoint {str(path)!r} is not a folder")
    for algo in (path, path / "checkpoint"):
        modules = algo / MODULES_DIR
        if modules.is_dir():
            found = modules / module_id
            if not (found / CTOR_FILE).is_file():
                known = sorted(p.name for p in modules.iterdir() if (p / CTOR_FILE).is_file())
                raise FileNotFoundError(f"no RLModule {module_id!r} in checkpoint {str(algo)!r}; modules: {known}")
            return found
    if (path / CTOR_FILE).is_file() and not (path / MODULES_DIR.parts[0]).exists():
        return path
    raise FileNotFoundError(
        f"{str(path)!r} is not an RLlib checkpoint: expected an RLModule checkpoint, an Algorithm "
        f"checkpoint with {MODULES_DIR}/<module>, or a skyjo_env.train.rllib_ppo output folder with checkpoint/"
    )


class RLlibPolicy:
    """A trained RLlib module playing Skyjo in batch.

    Args:
        checkpoint: see :func:`module_path`.
        module_id: which module of an Algorithm checkpoint to play (default: the learner, ``"main"``).
        name: label in tournaments.
        greedy: play the most probable legal action; otherwise sample from the masked softmax.
        seed: seeds sampling when ``greedy`` is False.
    """

    def __init__(
        self,
        checkpoint: str | Path,
        module_id: str = MAIN,
        name: str = "rllib",
        *,
        greedy: bool = True,
        seed: int | None = None,
    ) -> None:
        path = module_path(checkpoint, module_id)
        try:
            self.module = RLModule.from_checkpoint(path)
        except Exception as exc:  # RLlib raises assorted errors for a broken folder
            raise ValueError(f"cannot load the RLModule at {str(path)!r}: {exc}") from exc
        self.module.eval()
        self.obs_size = int(self.module.observation_space["observation"].shape[0])
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)

    def logits(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Masked action logits ``(N, 26)`` of the module's inference pass."""
        obs = np.asarray(observations, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(
                f"observations must have shape (N, {self.obs_size}) for this agent "
                f"(trained for another player count?), got {obs.shape}"
            )
        batch = {
            "observation": torch.from_numpy(obs),
            "action_mask": torch.from_numpy(np.asarray(action_masks, np.int8)),
        }
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: batch})
        return out[Columns.ACTION_DIST_INPUTS].numpy()

    def __call__(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        logits = np.where(masks, self.logits(observations, masks), -np.inf)
        if self.greedy:
            return logits.argmax(axis=1)
        cumulative = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
        u = (1.0 - self.rng.random((len(cumulative), 1))) * cumulative[:, -1:]  # in (0, total]
        return (cumulative >= u).argmax(axis=1)  # the first action whose share reaches u: a legal one
