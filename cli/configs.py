def configs_command() -> None:
    """kafka-configs (being written)."""
