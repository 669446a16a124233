"""A lazy row generator for the `input.format: python` tests (imported by module path, as workers would)."""

import os


def people(shard: int, num_shards: int, rows: int = 1000, log_dir: str | None = None):
    """Rows i with i % num_shards == shard; each call is logged, so tests can count them."""
    if log_dir is not None:
        with open(os.path.join(log_dir, f"shard-{shard}-of-{num_shards}.calls"), "a") as handle:
            handle.write("called\n")
    for i in range(shard, rows, num_shards):
        height = 150.0 + (i * 37 % 50)
        yield {
            "id": i,
            "height": height if i % 10 else None,
            "city": ["paris", "oslo", "rome"][i % 3],
            "label": "tall" if height > 175 else "short",
        }


def with_bad_rows(shard: int, num_shards: int, rows: int = 2000):
    for row in people(shard, num_shards, rows):
        if row["id"] % 500 == 407 and row["id"] > 1000:  # past the rows type inference looks at
            row["height"] = "very tall"  # not a number: quarantined with its reason
        yield row


def breaks_in_the_pipeline(shard: int, num_shards: int, rows: int = 300):
    """Good rows for type inference (shard 0 of 1); the job's work units then fail mid-read."""
    yield from people(shard, num_shards, rows)
    if num_shards > 1:
        raise RuntimeError("the source broke mid-read\nsecond line of detail")


def tagged(shard: int, num_shards: int, rows: int = 60):
    """Rows with a list column (`tags`, 0-3 items) and a float, i % num_shards == shard."""
    names = ["red", "green", "blue"]
    for i in range(shard, rows, num_shards):
        yield {"id": i, "tags": names[: i % 4], "x": float(i % 11)}


def codes(shard: int, num_shards: int, rows: int = 300):
    """Rows i with i % num_shards == shard: an id and a whole-number code (a zip code)."""
    for i in range(shard, rows, num_shards):
        yield {"id": i, "code": (i * 7919) % 100_000}
