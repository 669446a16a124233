"""Beam jobs: sources, analyze/transform with tf.Transform, sinks; and tf.data readers of their output."""
