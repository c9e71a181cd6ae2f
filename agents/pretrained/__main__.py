"""Ship a trained model with the package (for maintainers):

    python -m agents.pretrained ENV MODEL --reproduce "grid-games train ..." [...] \
        --smoke-wins K [--results results.json]
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
parser.add_argument("--smoke-wins", type=int, required=True,
                    help="wins of the network alone in 20 held-out episodes")  # fmt: skip
parser.add_argument("--sample", action="store_true", help="the smoke check samples the policy")
parser.add_argument("--results", default=None, help="a JSON file of reference results")
args = parser.parse_args()
env_id = args.env if "/" in args.env else f"GridGames/{args.env}"
results = json.loads(Path(args.results).read_text()) if args.results else None
# a margin of two below the wins measured here: another CPU's arithmetic may flip a close call
smoke = {"episodes": 20, "wins": args.smoke_wins, "wins_at_least": max(0, args.smoke_wins - 2),
         "sample": args.sample}  # fmt: skip
print(ship(args.model, env_id, args.reproduce, smoke, results))
