#!/usr/bin/env bash
# Builds the benchmark's controller-runtime peer (main.go next to this script) from its pinned Go
# modules (go.mod + go.sum, fetched from the Go module proxy), the way tools/control-plane/build.sh
# builds the control plane.
#
# Output: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/bench/controller-runtime-<version>/memcached-operator
# The LAST line of stdout is the binary's path; progress goes to stderr.
#
# Idempotent: rebuilt only when the binary is missing or its stamp (a hash of go.mod, go.sum, *.go and
# the build recipe) changed. A warm run takes a few milliseconds. Not in the stamp: the Go toolchain.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"
log() { printf '[controller-runtime peer build] %s\n' "$*" >&2; }

version="$(awk '$1 == "sigs.k8s.io/controller-runtime" { print $2; exit }' "$here/go.mod")"
if [[ -z "$version" ]]; then
  log "cannot find sigs.k8s.io/controller-runtime in $here/go.mod"
  exit 1
fi
out_dir="${cache_root}/bench/controller-runtime-${version}"
bin="$out_dir/memcached-operator"

go_build_flags=(-p 2 -trimpath -buildvcs=false -mod=readonly)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w"

stamp="$(cd "$here" && { find . -maxdepth 1 -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum; printf '%s\n' "$build_recipe"; } | sha256sum | cut -c1-64)"

if [[ -x "$bin" && -f "$out_dir/.stamp" && "$(<"$out_dir/.stamp")" == "$stamp" ]]; then
  printf '%s\n' "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= 1.25 (https://go.dev/dl/)."
  exit 1
fi

mkdir -p "$out_dir"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$out_dir/.lock"
  flock 9
  if [[ -x "$bin" && -f "$out_dir/.stamp" && "$(<"$out_dir/.stamp")" == "$stamp" ]]; then
    printf '%s\n' "$bin"
    exit 0
  fi
fi

tmp="$out_dir/.memcached-operator.tmp.$$"
trap 'rm -f "$tmp"' EXIT
log "building memcached-operator (controller-runtime ${version}) -> $bin"
t0=$SECONDS
(cd "$here" && CGO_ENABLED=0 go build "${go_build_flags[@]}" -ldflags "-s -w" -o "$tmp" .)
mv -f "$tmp" "$bin"
printf '%s\n' "$stamp" >"$out_dir/.stamp"
log "built in $((SECONDS - t0)) s"
printf '%s\n' "$bin"
