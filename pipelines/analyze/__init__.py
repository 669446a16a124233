"""The analysis pass: the preprocessing_fn tf.Transform analyzes, its vocabularies and missing-value steps, the raw
statistics, and the canonical graph written from it.
"""
