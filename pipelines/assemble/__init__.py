"""After the pipeline, what run, apply and predict share: run.json's fields (rows, shards, seconds, versions), the
feature report, the files beside the graph, and the glue around a staged pipeline (what a job reads, its runner
options, when its work started).
"""
