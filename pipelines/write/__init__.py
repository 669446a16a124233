"""The transform pass: each unit's rows through the graph, encoded, split, framed and gzipped into shards, with its
quarantine, statistics per split and summary; predict's files.
"""
