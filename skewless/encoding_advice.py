"""How to feed a categorical feature to a model: one-hot or an embedding, and how wide.

The rule, per categorical feature with ``n`` distinct ids (vocabulary size + OOV buckets, hash buckets,
bucketize buckets, cross buckets):

- ``n <= 10``: one-hot (multi-hot for a list of ids): a handful of columns, nothing to learn.
- ``10 < n <= 50``: either works; skewless picks one-hot. It stays at most 50 columns, and the first
  Dense layer over a one-hot already learns an embedding of its own width.
- ``n > 50``: an embedding of ``min(600, round(1.6 * n ** 0.56))`` dimensions (a mean of embeddings for a
  list of ids); one-hot would make the input as wide as the vocabulary.

The thresholds are the project's seed notes' advice as issue 18 quotes it ("one-hot below ~10 categories,
embeddings above ~50"); the dimension formula is fast.ai's ``emb_sz_rule`` (fastai/tabular/model.py;
Howard & Gugger, "Fastai: a layered API for deep learning", 2020), an empirical fit from their tabular
models, chosen over the fourth-root rule of thumb of TensorFlow's feature-column guide, which gives
embeddings of 3 to 6 dimensions for 50 to 1,000 ids.

Imports nothing heavy: the report reuses it without TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

ONE_HOT = "one_hot"
EMBEDDING = "embedding"

# Up to here one-hot is clearly right; up to ONE_HOT_MAX it is still chosen (see the module docstring).
CLEARLY_ONE_HOT = 10
ONE_HOT_MAX = 50
EMBEDDING_DIM_MAX = 600


@dataclass(frozen=True)
class EncodingAdvice:
    """The encoding of one categorical feature: `encoding` is ONE_HOT or EMBEDDING; `width` is the
    number of model-input columns it gives (ids for one-hot, dimensions for an embedding)."""

    ids: int
    encoding: str
    width: int

    def describe(self, is_list: bool = False) -> str:
        """One line for people, e.g. "one-hot (7 ids)" or "embedding of 16 (64 ids)"."""
        if self.encoding == ONE_HOT:
            kind = "multi-hot" if is_list else "one-hot"
            either = f"; an embedding of {embedding_dim(self.ids)} would do too" if self.ids > CLEARLY_ONE_HOT else ""
            return f"{kind} ({self.ids} ids{either})"
        pooled = "mean of embeddings" if is_list else "embedding"
        return f"{pooled} of {self.width} ({self.ids} ids)"


def embedding_dim(ids: int) -> int:
    """fast.ai's embedding size rule for `ids` distinct ids (at least 1, at most EMBEDDING_DIM_MAX)."""
    return max(1, min(EMBEDDING_DIM_MAX, round(1.6 * ids**0.56)))


def advise(ids: int) -> EncodingAdvice:
    """The advised encoding of a categorical feature with `ids` distinct ids."""
    if ids < 1:
        raise ValueError(f"a categorical feature has at least one id, got {ids}")
    if ids <= ONE_HOT_MAX:
        return EncodingAdvice(ids, ONE_HOT, ids)
    return EncodingAdvice(ids, EMBEDDING, embedding_dim(ids))
