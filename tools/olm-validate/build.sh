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
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), OLM_VALIDATE_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"
heartbeat="${OLM_VALIDATE_HEARTBEAT_SECONDS:-30}"

log() { printf '[olm-validate build] %s\n' "$*" >&2; }

api_version="$(awk '$1 == "github.com/operator-framework/api" { print $2; exit } $1 == "require" && $2 == "github.com/operator-framework/api" { print $3; exit }' "$here/go.mod")"
if [[ -z "$api_version" ]]; then
  log "cannot find github.com/operator-framework/api in $here/go.mod"
  exit 1
fi
out_dir="${cache_root}/olm-validate/${api_version}"
bin="$out_dir/olm-validate"

# How the binary is built. Part of the stamp: change it when a flag below changes.
go_build_flags=(-p 2 -trimpath -buildvcs=false)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w"

stamp() {
  (cd "$here" && find . -maxdepth 1 -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum
    printf '%s\n' "$build_recipe") | sha256sum | cut -c1-64
}

up_to_date() { [[ -x "$bin" && -f "$out_dir/.stamp" && "$(<"$out_dir/.stamp")" == "$(stamp)" ]]; }

if up_to_date; then
  printf '%s\n' "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) to build $bin."
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
    printf '%s\n' "$bin"
    exit 0
  fi
fi

pid=""
tmp="$out_dir/.olm-validate.tmp.$$"
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  rm -f "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "building olm-validate (github.com/operator-framework/api ${api_version}) -> $bin"
t0=$SECONDS
(cd "$here" && CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "-s -w" -o "$tmp" .) &
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
  log "FAILED building olm-validate after $((SECONDS - t0)) s"
  exit 1
fi
pid=""
mv -f "$tmp" "$bin"
stamp >"$out_dir/.stamp.tmp" && mv -f "$out_dir/.stamp.tmp" "$out_dir/.stamp"
log "built $bin in $((SECONDS - t0)) s"
printf '%s\n' "$bin"
