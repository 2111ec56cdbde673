"""The floor: the shared vocabulary every room may import (errors, config value types, JVM/Scala text,
the log4j timestamp). It imports nothing of ours."""
