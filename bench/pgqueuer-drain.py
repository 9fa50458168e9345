"""The drain baseline for bench/per-user.sh: pgqueuer (a PostgreSQL job queue, on PyPI) on the same server.

    python3 bench/pgqueuer-drain.py enqueue DSN N   # installs pgqueuer's tables and queues N no-op jobs
    python3 bench/pgqueuer-drain.py drain DSN       # consumes until the queue is empty (run one per consumer)
"""
import asyncio
import sys

import asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.qm import QueueManager
from pgqueuer.queries import Queries
from pgqueuer.types import QueueExecutionMode


async def enqueue(dsn: str, jobs: int) -> None:
    connection = await asyncpg.connect(dsn)
    queries = Queries(AsyncpgDriver(connection))
    await queries.install()
    for first in range(0, jobs, 10_000):
        count = min(10_000, jobs - first)
        await queries.enqueue(["noop"] * count, [None] * count, [0] * count)
    await connection.close()


async def drain(dsn: str) -> None:
    connection = await asyncpg.connect(dsn)
    manager = QueueManager(Queries(AsyncpgDriver(connection)))

    @manager.entrypoint("noop")
    async def noop(job) -> None:
        pass

    await manager.run(mode=QueueExecutionMode.drain)
    await connection.close()


if __name__ == "__main__":
    if sys.argv[1] == "enqueue":
        asyncio.run(enqueue(sys.argv[2], int(sys.argv[3])))
    else:
        asyncio.run(drain(sys.argv[2]))
