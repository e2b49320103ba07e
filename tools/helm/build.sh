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
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), HELM_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"
heartbeat="${HELM_HEARTBEAT_SECONDS:-30}"

log() { printf '[helm build] %s\n' "$*" >&2; }

helm_version="$(awk '$1 == "helm.sh/helm/v4" { print $2; exit } $1 == "require" && $2 == "helm.sh/helm/v4" { print $3; exit }' "$here/go.mod")"
if [[ -z "$helm_version" ]]; then
  log "cannot find helm.sh/helm/v4 in $here/go.mod"
  exit 1
fi
bin_dir="${cache_root}/bin/helm-${helm_version}"
binary="$bin_dir/helm"

# How helm is built. Part of the stamp: change it when a flag below changes.
go_build_flags=(-p 2 -trimpath -buildvcs=false)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w,internal/version.version"

stamp() {
  (cd "$here" && sha256sum go.mod go.sum; printf '%s\n' "$build_recipe") | sha256sum | cut -c1-64
}

up_to_date() { [[ -x "$binary" && -f "$bin_dir/.stamp" && "$(<"$bin_dir/.stamp")" == "$(stamp)" ]]; }

if up_to_date; then
  printf '%s\n' "$binary"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) to build $binary."
  exit 1
fi

mkdir -p "$bin_dir"
# Serialise concurrent builds into the same dir (e.g. parallel test workers).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin_dir/.lock"
  if ! flock -n 9; then
    log "another build into $bin_dir is running; waiting for it"
    flock 9
  fi
  if up_to_date; then
    printf '%s\n' "$binary"
    exit 0
  fi
fi

pid=""
tmp="$bin_dir/.helm.tmp.$$"
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  rm -f "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ldflags: stamp the version so `helm version` reports it (Helm's Makefile does the same).
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=${helm_version}"
log "building helm ${helm_version} -> $binary"
t0=$SECONDS
(cd "$here" && CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "$ldflags" -o "$tmp" helm.sh/helm/v4/cmd/helm) &
pid=$!
next=$((t0 + heartbeat))
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  if ((SECONDS >= next)); then
    log "  ... still building ($((SECONDS - t0)) s)"
    next=$((SECONDS + heartbeat))
  fi
done
if ! wait "$pid"; then
  pid=""
  log "FAILED building helm after $((SECONDS - t0)) s"
  exit 1
fi
pid=""
mv -f "$tmp" "$binary"
stamp >"$bin_dir/.stamp.tmp" && mv -f "$bin_dir/.stamp.tmp" "$bin_dir/.stamp"
log "built $binary in $((SECONDS - t0)) s"
printf '%s\n' "$binary"
