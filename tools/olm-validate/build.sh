#!/usr/bin/env bash
# Builds olm-validate (main.go): Operator Framework's own bundle validators
# (github.com/operator-framework/api at the version go.mod pins), which `cdk8s-operator package olm`
# runs over the bundle it writes (lib/package/olm/olm-validator.ts).
#
# Output: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/olm-validate/<api version>/olm-validate
# The LAST line of stdout is that file's path; all progress goes to stderr.
#
# Idempotent: rebuilt only when the binary is missing or its stamp (a hash of go.mod, go.sum, the Go
# sources and the build recipe below) changed; a warm run takes milliseconds. Not in the stamp: the Go
# toolchain version (delete the olm-validate dir to rebuild with a new Go).
# A cold build on 2 busy cores: about 5 minutes (measured 2026-12-03, modules already downloaded).
#
# Shared steps (stamp, lock, heartbeat, clean-up): tools/build-lib.sh.
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), BUILD_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_NAME=olm-validate
source "$here/../build-lib.sh"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"

api_version="$(go_mod_version "$here/go.mod" github.com/operator-framework/api)"
if [[ -z "$api_version" ]]; then
  build_log "cannot find github.com/operator-framework/api in $here/go.mod"
  exit 1
fi
out_dir="${cache_root}/olm-validate/${api_version}"
bin="$out_dir/olm-validate"

# How the binary is built. Part of the stamp: change it when a flag below changes.
go_build_flags=(-p 2 -trimpath -buildvcs=false)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w"

stamp() { go_sources_stamp "$here" "$build_recipe" . -maxdepth 1; }
up_to_date() { [[ -x "$bin" && -f "$out_dir/.stamp" && "$(<"$out_dir/.stamp")" == "$(stamp)" ]]; }

if up_to_date; then
  printf '%s\n' "$bin"
  exit 0
fi
require_go "$bin"
lock_build_dir "$out_dir"
if up_to_date; then
  printf '%s\n' "$bin"
  exit 0
fi

build_log "building olm-validate (github.com/operator-framework/api ${api_version}) -> $bin"
t0=$SECONDS
BUILD_TMP="$out_dir/.olm-validate.tmp.$$"
(cd "$here" && CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "-s -w" -o "$BUILD_TMP" .) &
await_build $! olm-validate
install_built "$BUILD_TMP" "$bin" "$out_dir/.stamp" "$(stamp)"
build_log "built $bin in $((SECONDS - t0)) s"
printf '%s\n' "$bin"
