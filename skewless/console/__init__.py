"""What the CLI prints: a command's result as rich tables.

The CLI's side of the commands whose work lives elsewhere (schemas.validate, pipelines.commands.verify, skewless.drift,
skewless.inspect_run): those return plain results, and only the CLI (this package, skewless.cli and the
progress display) imports rich or typer, as tests/architecture/test_import_rules.py checks.
"""
