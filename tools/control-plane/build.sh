#!/usr/bin/env bash
# Builds the local control plane binaries used by lib/testing/control-plane.ts and `cdk8s-operator env`:
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok
# from the pinned Go modules next to this script (kube/, etcd/, kwok/: go.mod + go.sum).
#
# Usage: build.sh [--kubernetes-version MINOR]
#   MINOR (e.g. 1.35) picks an older Kubernetes of the tested range: its modules are in v<MINOR>/
#   (kube/ and etcd/; a module it lacks, such as kwok/, is the one next to this script). Without it, or
#   with the newest minor, the modules next to this script (the default, newest Kubernetes).
#   Which minors exist: the v*/ dirs here plus the default (docs/reference/kubernetes-versions.md).
#
# Output dir: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/bin/<k8s>-<etcd>-<kwok>/
# The LAST line of stdout is that dir; all progress goes to stderr.
#
# Idempotent: a binary is rebuilt only when it is missing or its stamp (a hash of its module's
# go.mod, go.sum and sources, plus the build recipe below) changed. A warm run takes a few milliseconds.
# Not in the stamp: the Go toolchain version (delete the bin dir to rebuild with a new Go).
#
# KUBEBUILDER_ASSETS: when set and it holds executable `etcd` and `kube-apiserver`, those two are not
# built (callers take them from KUBEBUILDER_ASSETS); the other three are still built here.
#
# Shared steps (stamp, lock, heartbeat, clean-up): tools/build-lib.sh.
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), KUBEBUILDER_ASSETS (see above),
# BUILD_HEARTBEAT_SECONDS (progress interval during a build, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_NAME=control-plane
source "$here/../build-lib.sh"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"
log() { build_log "$@"; }

# --kubernetes-version MINOR -> modules_root (where kube/ and etcd/ are read from).
minor=""
while (($#)); do
  case "$1" in
    --kubernetes-version) minor="${2:-}"; shift 2 || { log "--kubernetes-version needs a value (e.g. 1.35)"; exit 2; } ;;
    --kubernetes-version=*) minor="${1#*=}"; shift ;;
    *) log "unknown argument: $1 (usage: build.sh [--kubernetes-version MINOR])"; exit 2 ;;
  esac
done
minor="${minor#v}"
default_minor="$(go_mod_version "$here/kube/go.mod" k8s.io/kubernetes)"
default_minor="${default_minor#v}"
default_minor="${default_minor%.*}"
modules_root="$here"
if [[ -n "$minor" && "$minor" != "$default_minor" ]]; then
  if [[ ! "$minor" =~ ^1\.[0-9]+$ || ! -d "$here/v$minor/kube" ]]; then
    known="$default_minor"
    for d in "$here"/v1.*/; do [[ -d "$d/kube" ]] && known+=" $(basename "$d" | cut -c2-)"; done
    log "no Kubernetes $minor here; the tested minors are: $known"
    exit 2
  fi
  modules_root="$here/v$minor"
fi
# module_root NAME -> the dir holding module NAME (kube, etcd, kwok) for the chosen minor.
module_root() { if [[ -d "$modules_root/$1" ]]; then printf '%s' "$modules_root"; else printf '%s' "$here"; fi; }

# module_version DIR MODULE -> the version DIR/go.mod requires for MODULE.
module_version() {
  local v
  v="$(go_mod_version "$(module_root "$1")/$1/go.mod" "$2")"
  if [[ -z "$v" ]]; then
    log "cannot find $2 in $(module_root "$1")/$1/go.mod"
    exit 1
  fi
  printf '%s' "$v"
}

k8s_version="$(module_version kube k8s.io/kubernetes)"
etcd_version="$(module_version etcd go.etcd.io/etcd/server/v3)"
kwok_version="$(module_version kwok sigs.k8s.io/kwok)"
bin_dir="${cache_root}/bin/${k8s_version}-etcd${etcd_version}-kwok${kwok_version}"

# binary -> "module dir|package"
declare -A target=(
  [etcd]="etcd|."
  [kube-apiserver]="kube|./cmd/kube-apiserver"
  [kube-controller-manager]="kube|./cmd/kube-controller-manager"
  [kube-scheduler]="kube|./cmd/kube-scheduler"
  [kwok]="kwok|sigs.k8s.io/kwok/cmd/kwok"
)
order=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# Binaries KUBEBUILDER_ASSETS provides are skipped (only when it has both etcd and kube-apiserver).
from_assets=()
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if [[ -x "${KUBEBUILDER_ASSETS}/etcd" && -x "${KUBEBUILDER_ASSETS}/kube-apiserver" ]]; then
    from_assets=(etcd kube-apiserver)
    log "using etcd and kube-apiserver from KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} (not building them)"
    log "note: kube-controller-manager/kube-scheduler are ${k8s_version}; they must not be newer than that kube-apiserver"
  else
    log "KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} lacks an executable etcd or kube-apiserver; building all binaries"
  fi
fi

wanted=()
for b in "${order[@]}"; do
  skip=0
  for a in "${from_assets[@]+"${from_assets[@]}"}"; do [[ "$a" == "$b" ]] && skip=1; done
  ((skip)) || wanted+=("$b")
done

# How binaries are built. Part of every stamp: change it (or bump the recipe number) when a flag
# below changes, so existing binaries are rebuilt; editing comments does not force a rebuild.
go_build_flags=(-p 2 -trimpath -buildvcs=false)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w,component-base/version,kwok/consts.Version"

# stamp_of BINARY -> hash of its module's go.mod, go.sum and Go sources, and the build recipe.
stamp_of() { local m="${target[$1]%%|*}"; go_sources_stamp "$(module_root "$m")" "$build_recipe" "$m"; }

up_to_date() {
  local b="$1"
  [[ -x "$bin_dir/$b" && -f "$bin_dir/.stamp-$b" && "$(<"$bin_dir/.stamp-$b")" == "$(stamp_of "$b")" ]]
}

stale=()
for b in "${wanted[@]}"; do up_to_date "$b" || stale+=("$b"); done
if ((${#stale[@]} == 0)); then
  printf '%s\n' "$bin_dir"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) or set KUBEBUILDER_ASSETS, or pass binDir."
  exit 1
fi

# Serialise concurrent builds into the same dir (e.g. parallel test workers).
lock_build_dir "$bin_dir"
stale=()
for b in "${wanted[@]}"; do up_to_date "$b" || stale+=("$b"); done

# ldflags: stamp the Kubernetes version so /version reports it. Fixed values only (reproducible):
# gitCommit is the module's go.sum hash (the proxy gives no commit), buildDate the module's release time.
kube_ldflags() {
  local info sum when
  info="$(cd "$(module_root kube)/kube" && go mod download -json "k8s.io/kubernetes@${k8s_version}")"
  sum="$(printf '%s' "$info" | sed -n 's/.*"Sum": "\(.*\)".*/\1/p')"
  when="$(sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' "$(printf '%s' "$info" | sed -n 's/.*"Info": "\(.*\)".*/\1/p')")"
  local minor="${k8s_version#v1.}"
  minor="${minor%%.*}"
  local pkg=k8s.io/component-base/version
  printf '%s' "-s -w -X ${pkg}.gitVersion=${k8s_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  printf '%s' " -X ${pkg}.gitCommit=module-${sum} -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=${when:-1970-01-01T00:00:00Z}"
}

start_all=$SECONDS
built=0
for b in "${stale[@]+"${stale[@]}"}"; do
  dir="${target[$b]%%|*}"
  pkg="${target[$b]#*|}"
  ldflags="-s -w"
  case "$dir" in
    kube) ldflags="$(kube_ldflags)" ;;
    kwok) ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v}" ;;
  esac
  log "building $b ($dir: $pkg) -> $bin_dir/$b"
  t0=$SECONDS
  BUILD_TMP="$bin_dir/.$b.tmp.$$"
  (cd "$(module_root "$dir")/$dir" && CGO_ENABLED=0 exec go build "${go_build_flags[@]}" -ldflags "$ldflags" -o "$BUILD_TMP" "$pkg") &
  await_build $! "$b"
  install_built "$BUILD_TMP" "$bin_dir/$b" "$bin_dir/.stamp-$b" "$(stamp_of "$b")"
  log "built $b in $((SECONDS - t0)) s"
  built=$((built + 1))
done
log "done: ${built} binaries built in $((SECONDS - start_all)) s"
printf '%s\n' "$bin_dir"
