# Shared steps of the Go build scripts in tools/*/build.sh (sourced, not run). Each script builds a
# tool from the Go modules its go.mod pins into the binaries cache
# (${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}) and prints the result's path as the
# LAST line of stdout; progress goes to stderr. What the scripts share:
#
#   build_log MESSAGE...                       '[<BUILD_NAME> build] MESSAGE' on stderr
#   go_mod_version GOMOD MODULE                the version GOMOD requires for MODULE ('' when absent)
#   files_stamp DIR RECIPE FILE...             sha256 over the files (paths relative to DIR) and RECIPE
#   go_sources_stamp DIR RECIPE FIND_ARGS...   the same over go.mod, go.sum and *.go that
#                                              `find FIND_ARGS` lists in DIR, sorted (LC_ALL=C)
#   require_go WHAT                            exits 1 with an install hint when `go` is missing
#   lock_build_dir DIR                         serialises builds into DIR (flock on DIR/.lock; waits,
#                                              saying so); callers check their stamp again after it
#   await_build PID WHAT                       a heartbeat line every BUILD_HEARTBEAT_SECONDS (default
#                                              30) while PID runs; exits 1 naming WHAT if PID fails
#   install_built TMP OUT STAMP_FILE STAMP     moves TMP to OUT, then writes STAMP to STAMP_FILE
#
# A stamp does not cover the Go toolchain version (delete the output to rebuild with a new Go).
# Set BUILD_NAME before sourcing. BUILD_TMP (the temp output of the running build) is removed, and
# the running build stopped, when the script exits or is interrupted.

build_log() { printf '[%s build] %s\n' "${BUILD_NAME:?}" "$*" >&2; }

go_mod_version() {
  awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"
}

files_stamp() {
  local dir="$1" recipe="$2"
  shift 2
  (cd "$dir" && sha256sum "$@"; printf '%s\n' "$recipe") | sha256sum | cut -c1-64
}

go_sources_stamp() {
  local dir="$1" recipe="$2"
  shift 2
  (cd "$dir" && find "$@" -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum
    printf '%s\n' "$recipe") | sha256sum | cut -c1-64
}

require_go() {
  if ! command -v go >/dev/null 2>&1; then
    build_log "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) to build $1."
    exit 1
  fi
}

lock_build_dir() {
  mkdir -p "$1"
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$1/.lock"
  if ! flock -n 9; then
    build_log "another build into $1 is running; waiting for it"
    flock 9
  fi
}

BUILD_PID=""
BUILD_TMP=""
_build_cleanup() {
  if [[ -n "$BUILD_PID" ]] && kill -0 "$BUILD_PID" 2>/dev/null; then kill "$BUILD_PID" 2>/dev/null || true; fi
  if [[ -n "$BUILD_TMP" ]]; then rm -f "$BUILD_TMP"; fi
}
trap _build_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

await_build() {
  local what="$2" t0=$SECONDS heartbeat="${BUILD_HEARTBEAT_SECONDS:-30}"
  BUILD_PID="$1"
  local next=$((t0 + heartbeat))
  while kill -0 "$BUILD_PID" 2>/dev/null; do
    sleep 1
    if ((SECONDS >= next)); then
      build_log "  ... still building $what ($((SECONDS - t0)) s)"
      next=$((SECONDS + heartbeat))
    fi
  done
  if ! wait "$BUILD_PID"; then
    BUILD_PID=""
    build_log "FAILED building $what after $((SECONDS - t0)) s"
    exit 1
  fi
  BUILD_PID=""
}

install_built() {
  mv -f "$1" "$2"
  BUILD_TMP=""
  printf '%s\n' "$4" >"$3.tmp" && mv -f "$3.tmp" "$3"
}
