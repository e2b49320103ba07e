#!/usr/bin/env bash
# Builds the offline validator of built-in kinds (main.go, validate.go, copied_strategies.go, exports.go:
# Kubernetes' own defaulting and create validation, k8s.io/kubernetes at the version go.mod pins, the
# same as the control plane's tools/control-plane/kube/go.mod) as a WebAssembly reactor:
#   GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
# which lib/validator/ instantiates once per process under node:wasi.
#
# Output: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/validator/<k8s version>/validator.wasm
# The LAST line of stdout is that file's path; all progress goes to stderr.
#
# Idempotent: rebuilt only when the file is missing or its stamp (a hash of go.mod, go.sum, the Go
# sources and the build recipe below) changed; a warm run takes milliseconds. Not in the stamp: the Go
# toolchain version (delete the validator dir to rebuild with a new Go).
# A cold build on 2 busy cores: about 7 minutes and 1.3 GB of memory for the compiler (measured
# 2026-12-03), most of it compiling k8s.io/kubernetes' packages for wasm; later builds reuse Go's
# build cache.
#
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), VALIDATOR_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"
heartbeat="${VALIDATOR_HEARTBEAT_SECONDS:-30}"

log() { printf '[validator build] %s\n' "$*" >&2; }

k8s_version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit } $1 == "require" && $2 == "k8s.io/kubernetes" { print $3; exit }' "$here/go.mod")"
if [[ -z "$k8s_version" ]]; then
  log "cannot find k8s.io/kubernetes in $here/go.mod"
  exit 1
fi
out_dir="${cache_root}/validator/${k8s_version}"
wasm="$out_dir/validator.wasm"

# How the module is built. Part of the stamp: change it when a flag below changes.
go_build_flags=(-p 2 -trimpath -buildvcs=false -buildmode=c-shared)
build_recipe="recipe-1 GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w"

stamp() {
  (cd "$here" && find . -maxdepth 1 -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum
    printf '%s\n' "$build_recipe") | sha256sum | cut -c1-64
}

up_to_date() { [[ -f "$wasm" && -f "$out_dir/.stamp" && "$(<"$out_dir/.stamp")" == "$(stamp)" ]]; }

if up_to_date; then
  printf '%s\n' "$wasm"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) to build $wasm."
  exit 1
fi

mkdir -p "$out_dir"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$out_dir/.lock"
  if ! flock -n 9; then
    log "another build into $out_dir is running; waiting for it"
    flock 9
  fi
  if up_to_date; then
    printf '%s\n' "$wasm"
    exit 0
  fi
fi

pid=""
tmp="$out_dir/.validator.wasm.tmp.$$"
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  rm -f "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "building the validator (k8s.io/kubernetes ${k8s_version}, wasip1/wasm) -> $wasm"
t0=$SECONDS
(cd "$here" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "-s -w" -o "$tmp" .) &
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
  log "FAILED building the validator after $((SECONDS - t0)) s"
  exit 1
fi
pid=""
mv -f "$tmp" "$wasm"
stamp >"$out_dir/.stamp.tmp" && mv -f "$out_dir/.stamp.tmp" "$out_dir/.stamp"
log "built $wasm ($(($(stat -c %s "$wasm") / 1000000)) MB) in $((SECONDS - t0)) s"
printf '%s\n' "$wasm"
