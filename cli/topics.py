def topics_command() -> None:
    """kafka-topics (being written)."""
