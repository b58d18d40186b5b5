#!/usr/bin/env bash
# The library as its users install it: build the wheel, install it (not editable) in a fresh virtual
# environment, and use it from a folder of the user's own that holds `agents/`, `evaluation/` and
# `apps/` packages and a `train.py` (names the library must neither import nor shadow). Checks that
# the wheel installs no top-level module but skyjo_env, that `skyjo --help` and a tournament with a
# plug-in agent given by file path work with the core dependencies only, and that the README's
# Python examples and a short training run work.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" .
wheel=$(ls "$work"/dist/skyjo_env-*.whl)
tops=$(python3 -m zipfile -l "$wheel" | awk 'NR > 1 {print $1}' | cut -d/ -f1 | sort -u | grep -v '\.dist-info$')
if [ "$tops" != "skyjo_env" ]; then
    echo "check_wheel: the wheel installs top-level entries other than skyjo_env: $tops" >&2
    exit 1
fi

python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "$wheel"

# The user's project: its own agents/, evaluation/ and apps/ packages and train.py, which importing
# skyjo_env must not touch.
project="$work/project"
for package in agents evaluation apps; do
    mkdir -p "$project/$package"
    echo "raise ImportError(\"the user project $package package was imported\")" > "$project/$package/__init__.py"
done
echo 'raise SystemExit("the user project train.py was run")' > "$project/train.py"
cat > "$project/bot.py" <<'EOF'
import numpy as np


def policy(observations, masks):
    """The legal action with the highest id."""
    return masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)
EOF
cd "$project"
"$work/venv/bin/skyjo" --help > /dev/null
"$work/venv/bin/skyjo" tournament --agents mine=bot.py:policy counting --games 100 --no-progress --out out | tee tournament.txt
grep -q "^mine " tournament.txt
"$work/venv/bin/python" -c "import skyjo_env, gymnasium; gymnasium.make('skyjo_env/Skyjo-v0').reset(seed=0)"
# The benchmark scripts of a clone start with the core dependencies only (RLlib's and training's need their extras).
for script in aec_env engine leaderboard search search_decisions tournament vector_env; do
    "$work/venv/bin/python" "$root/benchmarks/$script.py" --help > /dev/null
done

# The README's Python examples (one needs MaskablePPO: the train extra).
"$work/venv/bin/python" -m pip install --quiet "$wheel[train]"
"$work/venv/bin/python" - "$root/README.md" <<'EOF'
import re
import sys

blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), flags=re.S)
namespace: dict = {}
for block in blocks:
    exec(compile(block, "README.md", "exec"), namespace)
print(f"check_wheel: {len(blocks)} README examples ran against the installed wheel")
EOF
# A short training run from the user's folder, its output sent to a log (each PPO update runs in a
# process of its own, started as python -m skyjo_env.train.overlap: it must not run the user's train.py),
# after a small softened warm start from counting (the main job's, scaled down).
"$work/venv/bin/skyjo" train --warm-start-samples 20000 --warm-start-epochs 1 --total-timesteps 8192 --num-envs 64 \
    --eval-every 0 --eval-games 10 --final-games 10 --out run > train.log 2>&1
grep -q "softened at 1 point" train.log
grep -q "agent: run/agent.npz" train.log
echo "check_wheel: ok"
