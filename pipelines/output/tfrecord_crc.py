"""TFRecord's checksum, which a reader checks (reading/tfrecord.py) and a writer writes (write/shards.py)."""

from __future__ import annotations

import google_crc32c
import numpy as np


def masked_crc(data: bytes) -> int:
    """TFRecord's checksum: CRC32C, rotated right by 15 bits plus a constant."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def masked(crcs: np.ndarray) -> np.ndarray:
    """`masked_crc`'s arithmetic on an array of CRC32C values, as little-endian uint32."""
    crcs = crcs.astype(np.uint64)
    return ((((crcs >> 15) | (crcs << 17)) + 0xA282EAD8) & 0xFFFFFFFF).astype("<u4")
