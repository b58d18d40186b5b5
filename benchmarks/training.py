"""Training throughput: PPO steps per second of the main job's recipe, split into where the time goes.

Runs ``skyjo train`` on its defaults but for the opponents and the learning rate, pinned to those of
the main job at commit 4d242ec (2 players, counting's advice, opponents counting 0.6, threshold 0.1
and self-play 0.3, learning rate 1e-4 constant), so that a commit of then and one of now play the
same games at each commit's own default batch layout, epochs and precision; from scratch (no warm
start: the PPO phase is what is measured) for ``--steps`` learner steps (sb3 rounds them up to whole
rollouts; the figures divide by the steps made), without evaluations. The default million steps
fill the self-play pool to five snapshots and make the start of the update process (``--overlap``,
the default) a small part, as in the main job. Steps per second are the steps made over the wall
time of the PPO phase (``Run.learn``). Within it the script times, in the main process, the rollout
collection and the PPO update (with ``--overlap``, where the update runs in a process of its own
during the next rollout, the time the main process waits for it), and within the collection the
vector env's step (opponents and advice included), the counting heuristic's cost model (opponents
and advice alike), and the numpy networks of self-play snapshots. With ``--commit REV`` it measures
the code of that commit the same way, in the same run, and prints the ratio of the two;
each measurement runs in a process of its own. ``skyjo train`` flags after ``--`` are added to this
checkout's recipe (``--baseline`` then measures this checkout without them, in the same run), to
time a recipe change:

    python benchmarks/training.py [--steps 1000000] [--commit REV | --baseline] [-- TRAIN FLAGS...]

Figures are wall-clock seconds on a shared machine: run it on an idle one and compare within a run.
An older commit runs with this venv's packages: commit 4d242ec's code also imports tqdm and rich,
which this checkout no longer needs (``pip install tqdm rich`` first).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs in a child process: sys.argv = [tree or "", steps, out, *train flags]. A tree is put first on sys.path, as
# it is laid out installed (an older commit may have top-level agents/ and train/ packages).
DRIVER = r"""
import functools, importlib, json, sys, time
tree, steps, out, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
if tree:
    sys.path.insert(0, tree)

def find(*paths):
    for path in paths:
        module, _, name = path.rpartition(".")
        try:
            return importlib.import_module(module), name
        except ImportError:
            continue
    raise ImportError(paths)

spent = {}

def timed(label, *paths):
    module, dotted = find(*paths)
    owner_name, _, attr = dotted.rpartition(":") if ":" in dotted else ("", "", dotted)
    owner = getattr(module, owner_name) if owner_name else module
    inner = getattr(owner, attr)
    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - started
            if hasattr(args[0], "num_timesteps"):  # the model: sb3 collects whole rollouts, so it may pass --steps
                spent["steps"] = args[0].num_timesteps
    setattr(owner, attr, wrapper)

timed("learning", "skyjo_env.train.ppo.Run:learn", "train.ppo.Run:learn")
timed("collection", "sb3_contrib.ppo_mask.ppo_mask.MaskablePPO:collect_rollouts")
timed("update", "sb3_contrib.ppo_mask.ppo_mask.MaskablePPO:train")
try:  # updates overlapped with the rollouts (from the commit that brought them): the time spent waiting for them
    timed("update", "skyjo_env.train.overlap.OverlappedPPO:train")
except (ImportError, AttributeError):
    pass
timed("env step", "skyjo_env.train.advised_env.AdvisedVecEnv:step_wait", "train.advised_env.AdvisedVecEnv:step_wait")
timed("counting costs", "skyjo_env.agents.counting.CountingPolicy:costs", "agents.counting.CountingPolicy:costs")
timed("snapshot networks", "skyjo_env.agents.mlp_policy.MLPPolicy:__call__", "agents.mlp_policy.MLPPolicy:__call__")
try:  # networks that play together (from the commit that brought it)
    timed("snapshot networks", "skyjo_env.agents.mlp_policy.MLPPolicy:play_together")
except (ImportError, AttributeError):
    pass
cli, _ = find("skyjo_env.apps.cli.main", "skyjo_env.train.cli.main", "train.cli.main")  # older commits: before apps/, before the namespace
config, _ = find("skyjo_env.train.config.TrainConfig", "train.config.TrainConfig")
import dataclasses
RECIPE_FIELDS = {f.name for f in dataclasses.fields(config.TrainConfig)}
started = time.perf_counter()
cli.main(["train", "--warm-start", "none", "--total-timesteps", str(steps), "--eval-every", "0", "--eval-games", "2",
          "--final-games", "2", "--time-limit-minutes", "600", "--no-progress", "--out", out,
          "--opponents", "counting=0.6", "threshold=0.1", "self=0.3", "--learning-rate", "1e-4"]
         + (["--learning-rate-schedule", "constant"] if "learning_rate_schedule" in RECIPE_FIELDS else []) + extra)
spent["total"] = time.perf_counter() - started
print("RESULT " + json.dumps(spent))
"""


def measure(tree: Path | None, steps: int, extra: list[str]) -> dict[str, float]:
    """Seconds spent per part, for the code at ``tree`` (``None``: this checkout's installed package),
    with the ``skyjo train`` flags ``extra`` added to the recipe."""
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(
            [sys.executable, "-c", DRIVER, str(tree or ""), str(steps), str(Path(out) / "run"), *extra],
            capture_output=True, text=True, cwd=out,
        )  # fmt: skip
    if result.returncode:  # e.g. an older commit that needs a package this venv lacks
        sys.exit(f"the run of {tree or 'this checkout'} failed:\n{result.stderr[-3000:]}")
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def commit_tree(rev: str, work: Path) -> Path:
    """The code of commit ``rev`` laid out as installed, in ``work`` (a git worktree, mirrored if needed)."""
    checkout = work / "checkout"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), rev], check=True, capture_output=True
    )
    layout = checkout / ".ci" / "installed_layout.py"
    if not layout.exists():  # before the one namespace: top-level agents/ and train/ import from the checkout itself
        return checkout
    subprocess.run([sys.executable, str(layout), str(work / "packages")], check=True, capture_output=True, cwd=checkout)
    return work / "packages"


def report(name: str, spent: dict[str, float]) -> None:
    print(f"{name}: {spent['steps_per_s']:,.0f} PPO steps/s ({spent['steps']:,.0f} steps, "
          f"{spent['learning']:.1f} s of learning; {spent['total']:.1f} s in all)")  # fmt: skip
    for part in ("collection", "env step", "counting costs", "snapshot networks", "update"):
        print(f"  {part:<18} {spent.get(part, 0.0):7.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="PPO learner steps to time (default 1,000,000)")
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument(
        "--commit", default=None, metavar="REV", help="also measure the code of this commit, as a baseline"
    )
    baseline.add_argument(
        "--baseline", action="store_true", help="also measure this checkout without the flags after --, as a baseline"
    )
    parser.add_argument(
        "train_flags", nargs="*", metavar="-- TRAIN FLAGS", help="skyjo train flags added to the recipe"
    )
    args = parser.parse_args()
    if args.baseline and not args.train_flags:
        parser.error("--baseline compares with the flags after --; give some, e.g. -- --num-envs 256")
    results = {}
    if args.baseline:
        results["without the flags"] = measure(None, args.steps, [])
    if args.commit:
        with tempfile.TemporaryDirectory() as work:
            try:
                results[f"commit {args.commit}"] = measure(commit_tree(args.commit, Path(work)), args.steps, [])
            finally:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(Path(work) / "checkout")], check=False
                )
    results["this checkout" + (" with " + " ".join(args.train_flags) if args.train_flags else "")] = measure(
        None, args.steps, args.train_flags
    )
    for name, spent in results.items():
        spent["steps_per_s"] = spent["steps"] / spent["learning"]
        report(name, spent)
    if len(results) == 2:
        base, new = (r["steps_per_s"] for r in results.values())
        print(f"speed-up: {new / base:.2f}x PPO steps/s")


if __name__ == "__main__":
    main()
