"""How many work units a job cuts its input into: each unit writes one shard of every split.

How many (`output.shards: auto`), following the TFRecord guidance of 100-200 MB files and enough
files for parallel readers:

    estimate  = the output size, taken as the input size (CSV bytes, or rows x 100 bytes for the
                synthetic source; gzip'd tf.Examples of transformed features come out at about that)
    by_size   = ceil(estimate / target_shard_mb)
    n         = max(by_size, 10 x readers)            at least 10 files per reader
    n         = min(n, max(1, ceil(estimate / 1 MB)))  but no file under ~1 MB: small data, few files

e.g. 123 MB, readers 1 -> max(1, 10) = 10, capped at 124 -> 10 shards; 5 GB -> 40 shards of 128 MB;
2 MB -> 2 shards; 300 KB -> 1 shard.
"""

from __future__ import annotations

import math

MB = 1 << 20
SYNTHETIC_ROW_BYTES = 100


def auto_shard_count(estimated_bytes: int, target_shard_mb: int = 128, readers: int = 1) -> int:
    by_size = math.ceil(estimated_bytes / (target_shard_mb * MB))
    wanted = max(by_size, 10 * readers)
    return max(1, min(wanted, math.ceil(estimated_bytes / MB)))

