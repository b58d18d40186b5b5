"""Evaluation: tournaments, ratings, the benchmark and their reports. Installed as `skyjo_env.evaluation`."""
