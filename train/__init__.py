"""Training, tournaments and the ``skyjo`` command: everything that plays the engine and its agents
at scale. Installed as ``skyjo_env.train``."""
