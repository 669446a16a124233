"""The raw statistics of a run: counted where the rows are (the analysis pass's per dataset, `analyze/stats.py`;
each split's from the rows in input order, `in_input_order.py`), then merged and written in one place
(`assembly.assemble_statistics`): run.json's statistics per column and statistics/Split-*/FeatureStats.pb.
"""
