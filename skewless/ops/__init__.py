"""TensorFlow functions the job's graph (`skewless.transforms`) and the Keras layers (`skewless.layers`) both run.

A layer that reproduces a step of the graph calls the graph's own function, so the two compute the same bits by
construction. This package sits below both: it imports neither (tests/architecture/test_import_rules.py), and
TensorFlow only inside its functions, as the transforms do (loading a config reads the transforms' modules).
"""
