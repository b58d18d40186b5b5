"""Applications: the `skyjo` command, play in the terminal and in the browser. Installed as `skyjo_env.apps`."""
