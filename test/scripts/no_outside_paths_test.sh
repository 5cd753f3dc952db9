#!/usr/bin/env bash
# The repository stands on its own: no build file, source, test or script may
# name a path beside the checkout (../shared and the like), which users of a
# clone never have. Prose (Markdown) may mention such folders; data may not
# be read from them. scripts/check-standalone.sh proves the same by building
# a clone with nothing beside it; this catches what no test exercises.
set -euo pipefail
root="$1"
cd "$root"
hits=$(git grep -nE '\.\./shared|/work/shared|SHARED_DIR' -- \
         ':!*.md' ':!test/data/**' ':!test/scripts/no_outside_paths_test.sh' || true)
if [ -n "$hits" ]; then
  echo "paths outside the repository:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "no path outside the repository in $(git ls-files | wc -l) tracked files"
