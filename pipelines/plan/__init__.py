"""Before the pipeline: the raw columns' types, and the input cut into work units."""
