"""Canon's performance benchmark: `python -m bench` (`make bench`); bench/README.md says what it
measures and how to run it.

The parent process (the CLI, the report) never imports Canon: Linux carries a process's peak RSS
across `exec`, so whatever the parent held would show up in every child's figure. Each case runs in
a child process that imports only its own module (bench/child.py).

Parent side, standard library only:
  __main__.py    the CLI: flags, the sections in order, the table, results.json
  child.py       one case per fresh interpreter (`--case`), and its peak RSS, load and profile
  report.py      Figures (every figure with target and status), the keys results.json always carries,
                 the printed table, the commit measured
  figures.py     each section's raw case result -> its figures
  peers.py       dbt-ml and LlamaIndex through their own scripts, Canon on the same files (--peers)
  workdir.py     generated corpora, reused while unchanged, and working copies
  settings.py    the fixed day, the role, the query depth, where the results go
  timing.py      clocks, CPU seconds, peak RSS, load average, percentiles, medians, progress log
  gen_corpus.py  the seeded document corpus (also `python -m bench.gen_corpus OUT_DIR`)
  cli_asks.py    8: each question as a fresh `canon ask` process, its wall clock and peak RSS
  external.py    9: `canon build` in artifacts mode on every vendored dbt artifact set, each a process
                 (its wall clock and peak RSS), then timed `canon ask`s on the largest; its counting
                 helpers run as their own process (`python -m bench.external counts|pick HOME`)

Child side, the cases (they import Canon):
  pipeline.py    the production build stage by stage, the timed embedder; the peers' build step
  questions.py   the peers' query strings, governed questions, the retriever as the CLI wires it
  limit.py       1: the cold build against the model alone; the backend against PyTorch
  structural.py  2: cold, no-op, one changed body, ACL-only change, revocation
  query.py       3: warm ask and hybrid search against LanceDB's own hybrid query
  growth.py      6: one cold build per corpus size and what each store holds
  server.py      7: `canon serve http` at 1 / 8 / 32 MCP clients against in-process ask
  cli_scale.py   8: the large registry `canon ask` runs against, and the questions it is asked

The metadata benchmark (section 4) is its own program: `python -m bench.metadata` (bench/metadata.py
drives it and bench/gen_manifest.py writes the synthetic dbt target; each case is measured by
bench/metadata_load.py in a process of its own).
"""
