"""Training: PPO with sb3 or RLlib, warm start, networks, self-play and configs. Installed as `skyjo_env.train`."""
