"""The tf.data readers of a run: `make_dataset` (transformed shards) and `make_raw_dataset` (raw rows through the
graph). No Beam: a training container uses them.
"""
