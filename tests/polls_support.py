"""What the poll tests share: whether Debian's ``redis-server`` is here (``explorer.serving.RedisServer`` runs it)."""

import shutil

from explorer.serving import RedisServer

REDIS = shutil.which("redis-server")
REDIS_MISSING = "redis-server is not installed (apt-get install redis-server)"

__all__ = ["REDIS", "REDIS_MISSING", "RedisServer"]
