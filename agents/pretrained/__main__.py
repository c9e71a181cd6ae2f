"""Ship a trained model with the package (for maintainers):

    python -m agents.pretrained ENV MODEL --reproduce "grid-games train ..." [...] \
        (--smoke-wins K | --smoke-points P) [--results results.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agents.pretrained import ship

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("env")
parser.add_argument("model")
parser.add_argument("--reproduce", nargs="+", required=True, help="the commands that made it")
check = parser.add_mutually_exclusive_group(required=True)
check.add_argument("--smoke-wins", type=int,
                   help="wins of the network alone in 20 held-out episodes")  # fmt: skip
check.add_argument("--smoke-points", type=float,
                   help="games scored in points (Lines98): the network alone's mean score "
                   "in 20 held-out games")  # fmt: skip
parser.add_argument("--sample", action="store_true", help="the smoke check samples the policy")
parser.add_argument("--results", default=None, help="a JSON file of reference results")
args = parser.parse_args()
env_id = args.env if "/" in args.env else f"GridGames/{args.env}"
results = json.loads(Path(args.results).read_text()) if args.results else None
# a margin below what was measured here (two wins, a fifth of the points): another CPU's
# arithmetic may flip a close call
smoke = {"episodes": 20, "sample": args.sample}
if args.smoke_wins is not None:
    smoke |= {"wins": args.smoke_wins, "wins_at_least": max(0, args.smoke_wins - 2)}
else:
    smoke |= {"points": args.smoke_points, "points_at_least": round(0.8 * args.smoke_points, 1)}
print(ship(args.model, env_id, args.reproduce, smoke, results))
