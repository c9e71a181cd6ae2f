"""Training: the configuration (:mod:`agents.train.config`), its refusals
(:mod:`agents.train.checks`) and what it resolves to, once a run (:mod:`agents.train.plan`),
the envs and model a run builds (:mod:`agents.train.build`), stable-baselines3 runs
(:mod:`agents.train.sb3`) over the native batch (:mod:`agents.train.batch`), teaching by
the algorithms (:mod:`agents.train.labels`, :mod:`agents.train.cloning`,
:mod:`agents.train.teaching`), Ray RLlib (:mod:`agents.train.rllib`), run folders
(:mod:`agents.train.runs`), saved models as agents (:mod:`agents.train.models`) and Minari
datasets (:mod:`agents.train.demos`). Importing this package loads no learning library."""
