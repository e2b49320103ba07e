#!/usr/bin/env bash
# Builds the offline validator of built-in kinds (main.go, validate.go, copied_strategies.go, exports.go:
# Kubernetes' own defaulting and create validation, k8s.io/kubernetes at the version go.mod pins, the
# same as the control plane's tools/control-plane/kube/go.mod) and of custom resources against their
# CRD (custom_resource.go: apiextensions-apiserver's decoding and validation, CEL included) as a
# WebAssembly reactor:
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
# Shared steps (stamp, lock, heartbeat, clean-up): tools/build-lib.sh.
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), BUILD_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_NAME=validator
source "$here/../build-lib.sh"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"

k8s_version="$(go_mod_version "$here/go.mod" k8s.io/kubernetes)"
if [[ -z "$k8s_version" ]]; then
  build_log "cannot find k8s.io/kubernetes in $here/go.mod"
  exit 1
fi
out_dir="${cache_root}/validator/${k8s_version}"
wasm="$out_dir/validator.wasm"

# How the module is built. Part of the stamp: change it when a flag below changes.
go_build_flags=(-p 2 -trimpath -buildvcs=false -buildmode=c-shared)
build_recipe="recipe-1 GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w"

stamp() { go_sources_stamp "$here" "$build_recipe" . -maxdepth 1; }
up_to_date() { [[ -f "$wasm" && -f "$out_dir/.stamp" && "$(<"$out_dir/.stamp")" == "$(stamp)" ]]; }

if up_to_date; then
  printf '%s\n' "$wasm"
  exit 0
fi
require_go "$wasm"
lock_build_dir "$out_dir"
if up_to_date; then
  printf '%s\n' "$wasm"
  exit 0
fi

build_log "building the validator (k8s.io/kubernetes ${k8s_version}, wasip1/wasm) -> $wasm"
t0=$SECONDS
BUILD_TMP="$out_dir/.validator.wasm.tmp.$$"
(cd "$here" && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "-s -w" -o "$BUILD_TMP" .) &
await_build $! validator
install_built "$BUILD_TMP" "$wasm" "$out_dir/.stamp" "$(stamp)"
build_log "built $wasm ($(($(stat -c %s "$wasm") / 1000000)) MB) in $((SECONDS - t0)) s"
printf '%s\n' "$wasm"
