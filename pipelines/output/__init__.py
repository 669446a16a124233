"""Where a job's files go: Beam's filesystems, the staging directory and its publish, object stores, the progress
counters.
"""
