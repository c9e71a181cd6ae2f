# The figures a lent GPU machine gives (see docs/speed.md): run from the repository root
# there, with the wheels it lacks in .whl (gymnasium, Farama-Notifications,
# stable-baselines3, sb3-contrib; torch and numba are in its image; fetch them here with
# `pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl NAME==VERSION`)
# and OUT set to the folder whose files come back.
#
#   bash benchmarks/device_run.sh [scaling] [sokoban] [iterate]   (default: all three)
#
# 1. the scaling mode of benchmarks/train_speed.py on the GPU: Sokoban-v0, Minesweeper-v0
#    and Knight-v0 from 64 to 16,384 envs, Lines98-v0 and Pikachu-v0 to 1,024;
# 2. Sokoban-v0 trained from scratch on the GPU for SOKOBAN_SECONDS, 4,096 envs;
# 3. one round of expert iteration on Lines98-v0 from the shipped network, its searched
#    games played on every core but one.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
SOKOBAN_SECONDS=${SOKOBAN_SECONDS:-150}
cores=$(nproc)
parts=${*:-scaling sokoban iterate}
nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv | tee "$OUT/gpu.txt"

if [[ $parts == *scaling* ]]; then
timeout 200 python3 benchmarks/train_speed.py --scaling --devices cuda --iterations 3 \
    --envs GridGames/Sokoban-v0 GridGames/Minesweeper-v0 GridGames/Knight-v0 \
    --json "$OUT/scaling-fast.json" 2>&1 | grep -v '^{' | tee "$OUT/log.txt"
timeout 100 python3 benchmarks/train_speed.py --scaling --devices cuda --iterations 3 \
    --envs GridGames/Lines98-v0 GridGames/Pikachu-v0 --n-envs 64 256 1024 \
    --json "$OUT/scaling-slow.json" 2>&1 | grep -v '^{' | tee -a "$OUT/log.txt"

fi

if [[ $parts == *sokoban* ]]; then  # its level pool generated first over every core
timeout $((SOKOBAN_SECONDS + 60)) python3 - "$SOKOBAN_SECONDS" <<'EOF' 2>&1 | tee -a "$OUT/log.txt"
import sys, time
from agents.train.sb3 import default_config, train
from grid_envs.bench import fill_pool
print("pool filled in %.1f s" % fill_pool("GridGames/Sokoban-v0")[0])
config = default_config("GridGames/Sokoban-v0", device="cuda", n_envs=4096, n_steps=16,
                        batch_size=8192, n_epochs=4, eval_freq=2_000_000,
                        timesteps=10**9, time_limit=int(sys.argv[1]))
tick = time.perf_counter()
result = train(config, "/tmp/sokoban", progress=False)
print(f"trained {result.timesteps:,} steps in {time.perf_counter() - tick:.0f} s")
for steps, mean, wins in result.curve:
    print(f"  eval at {steps:>11,}: return {mean:7.2f}  win rate {wins:.0%}")
EOF
fi

if [[ $parts == *iterate* ]]; then
timeout 270 python3 -m grid_games.cli iterate Lines98-v0 \
    --model agents/pretrained/Lines98-v0/model.zip --simulations 64 --rounds 1 \
    --episodes $((3 * (cores - 1))) --eval-episodes 20 --workers $((cores - 1)) \
    --out /tmp/lines98-iterated 2>&1 | tee -a "$OUT/log.txt"
fi

tar czf "$OUT/runs.tgz" --exclude=checkpoints -C /tmp sokoban lines98-iterated 2>/dev/null
ls -la "$OUT"
