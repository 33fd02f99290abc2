#!/usr/bin/env bash
# Copies the example traces, the test data and the platforms into the seed
# corpora (tests/fuzz/corpus/{trace,platform}/seed_*, named after their path).
# Run it when a format changes, so the seeds stay valid inputs that reach deep
# into the loaders (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
seed() {  # seed TARGET FILE...
  local target=$1 f; shift
  for f in "$@"; do cp "$f" "tests/fuzz/corpus/$target/seed_${f//\//_}"; done
}
seed trace $(git ls-files 'traces/*.json' 'traces/**/*.json' 'tests/data/*.json' 'tests/data/**/*.json' |
             grep -v -e '^traces/golden/' -e '^tests/data/platform/')
seed platform $(git ls-files 'platforms/*.json' 'tests/data/platform/*.json')
