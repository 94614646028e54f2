"""The `canon` command line (`canon.cli.main:main` is the console script)."""
