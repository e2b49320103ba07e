#!/usr/bin/env bash
# Builds the Helm CLI (helm.sh/helm/v4, the version go.mod next to this script pins as a `tool`) used by
# `cdk8s-operator package helm`'s tests and CI (helm lint / template / install on generated charts).
#
# Output: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/bin/helm-<version>/helm
# (the same cache as tools/control-plane/build.sh's binaries).
# The LAST line of stdout is that file's path; all progress goes to stderr.
#
# Idempotent: rebuilt only when the binary is missing or its stamp (a hash of go.mod, go.sum and the
# build recipe below) changed; a warm run takes milliseconds. Not in the stamp: the Go toolchain
# version (delete the helm dir to rebuild with a new Go).
#
# Shared steps (stamp, lock, heartbeat, clean-up): tools/build-lib.sh.
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), BUILD_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_NAME=helm
source "$here/../build-lib.sh"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"

helm_version="$(go_mod_version "$here/go.mod" helm.sh/helm/v4)"
if [[ -z "$helm_version" ]]; then
  build_log "cannot find helm.sh/helm/v4 in $here/go.mod"
  exit 1
fi
bin_dir="${cache_root}/bin/helm-${helm_version}"
binary="$bin_dir/helm"

# How helm is built. Part of the stamp: change it when a flag below changes.
go_build_flags=(-p 2 -trimpath -buildvcs=false)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w,internal/version.version"

stamp() { files_stamp "$here" "$build_recipe" go.mod go.sum; }
up_to_date() { [[ -x "$binary" && -f "$bin_dir/.stamp" && "$(<"$bin_dir/.stamp")" == "$(stamp)" ]]; }

if up_to_date; then
  printf '%s\n' "$binary"
  exit 0
fi
require_go "$binary"
lock_build_dir "$bin_dir"
if up_to_date; then
  printf '%s\n' "$binary"
  exit 0
fi

# ldflags: stamp the version so `helm version` reports it (Helm's Makefile does the same).
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=${helm_version}"
build_log "building helm ${helm_version} -> $binary"
t0=$SECONDS
BUILD_TMP="$bin_dir/.helm.tmp.$$"
(cd "$here" && CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "$ldflags" -o "$BUILD_TMP" helm.sh/helm/v4/cmd/helm) &
await_build $! helm
install_built "$BUILD_TMP" "$binary" "$bin_dir/.stamp" "$(stamp)"
build_log "built $binary in $((SECONDS - t0)) s"
printf '%s\n' "$binary"
