#!/usr/bin/env bash
# Runs a command on the Node.js the operator images run (tools/image-node/version, fetched by fetch.sh):
# that Node's directory first in PATH, so `node`, and every `#!/usr/bin/env node` script the command
# starts (jest, tsx, npm), run on it. Fails, before running anything, if `node` then is another version.
#
#   bash tools/image-node/run.sh npx jest test/runtime
#   bash tools/image-node/run.sh npm run bench:peers -- --crs 1000
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="$(bash "$here/fetch.sh" | tail -n 1)"
export PATH="$bin_dir:$PATH"
want="v$(tr -d '[:space:]' < "$here/version")"
got="$(node --version)"
if [[ "$got" != "$want" ]]; then
  echo "tools/image-node/run.sh: node is $got in PATH, not the image's $want" >&2
  exit 1
fi
exec "$@"
