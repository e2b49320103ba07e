#!/usr/bin/env bash
# Builds Operator Lifecycle Manager's own operators and operator-registry's catalog server, at the
# versions go.mod next to this script pins as `tool`s, and copies OLM's CRDs beside them, for
# test/integration/olm-install.test.ts and init-project.test.ts (OLM installs the bundles `cdk8s-operator
# package olm` writes, through test/support/olm-cluster.ts):
#   olm      operator-lifecycle-manager/cmd/olm      olm-operator: OperatorGroups, ClusterServiceVersions
#   catalog  operator-lifecycle-manager/cmd/catalog  catalog-operator: CatalogSources, Subscriptions, InstallPlans
#   opm      operator-registry/cmd/opm               `opm render`, `opm validate`, `opm serve` (file-based catalogs)
#   crds/    operator-lifecycle-manager/deploy/chart/crds (operators.coreos.com), as OLM's chart installs them
#
# Output: ${CDK8S_OPERATOR_SDK_CACHE:-$HOME/.cache/cdk8s-operator-sdk}/bin/olm-<OLM version>/
# (the same cache as tools/control-plane/build.sh's binaries).
# The LAST line of stdout is that directory's path; all progress goes to stderr.
#
# Idempotent: rebuilt only when a binary or the CRDs are missing or the stamp (a hash of go.mod, go.sum
# and the build recipe below) changed; a warm run takes milliseconds. Not in the stamp: the Go
# toolchain version (delete the olm-<version> dir to rebuild with a new Go).
# A cold build (empty Go build cache, modules already downloaded) costs about 9.5 CPU-minutes (8 user,
# 1.5 sys): 46 min wall on 2 cores at load average ~20 (measured 2026-12-03); about 9 min at load ~10
# with the Kubernetes packages already in the build cache from the other tools.
#
# Shared steps (stamp, lock, heartbeat, clean-up): tools/build-lib.sh.
# Environment: CDK8S_OPERATOR_SDK_CACHE (cache root), BUILD_HEARTBEAT_SECONDS (progress interval, default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_NAME=olm
source "$here/../build-lib.sh"
cache_root="${CDK8S_OPERATOR_SDK_CACHE:-${HOME}/.cache/cdk8s-operator-sdk}"

olm_module=github.com/operator-framework/operator-lifecycle-manager
registry_module=github.com/operator-framework/operator-registry
olm_version="$(go_mod_version "$here/go.mod" "$olm_module")"
if [[ -z "$olm_version" ]]; then
  build_log "cannot find $olm_module in $here/go.mod"
  exit 1
fi
bin_dir="${cache_root}/bin/olm-${olm_version}"
binaries=(olm catalog opm)
declare -A package_of=([olm]="$olm_module/cmd/olm" [catalog]="$olm_module/cmd/catalog" [opm]="$registry_module/cmd/opm")

# How the binaries are built. Part of the stamp: change it when a flag below changes.
# Tags as operator-registry's Makefile builds opm: containers_image_openpgp replaces containers/image's
# gpgme signature code (cgo) with pure Go; json1 is OLM's and opm's default tag. CGO_ENABLED=0 as OLM's
# Makefile: opm's SQLite catalogs (deprecated) would need cgo; file-based catalogs do not.
go_build_flags=(-p 2 -trimpath -buildvcs=false -tags json1,containers_image_openpgp)
build_recipe="recipe-1 CGO_ENABLED=0 ${go_build_flags[*]} ldflags:-s,-w crds:deploy/chart/crds"

stamp() { files_stamp "$here" "$build_recipe" go.mod go.sum; }
up_to_date() {
  local b
  for b in "${binaries[@]}"; do [[ -x "$bin_dir/$b" ]] || return 1; done
  [[ -d "$bin_dir/crds" && -f "$bin_dir/.stamp" && "$(<"$bin_dir/.stamp")" == "$(stamp)" ]]
}

if up_to_date; then
  printf '%s\n' "$bin_dir"
  exit 0
fi
require_go "OLM into $bin_dir"
lock_build_dir "$bin_dir"
if up_to_date; then
  printf '%s\n' "$bin_dir"
  exit 0
fi

build_log "building OLM ${olm_version} (olm, catalog) and opm ($(go_mod_version "$here/go.mod" "$registry_module")) -> $bin_dir"
t0=$SECONDS
for b in "${binaries[@]}"; do
  BUILD_TMP="$bin_dir/.$b.tmp.$$"
  (cd "$here" && CGO_ENABLED=0 exec nice go build "${go_build_flags[@]}" -ldflags "-s -w" -o "$BUILD_TMP" "${package_of[$b]}") &
  await_build $! "$b"
  mv -f "$BUILD_TMP" "$bin_dir/$b"
  BUILD_TMP=""
done
olm_dir="$(cd "$here" && go list -m -f '{{.Dir}}' "$olm_module")"
rm -rf "$bin_dir/crds"
mkdir -p "$bin_dir/crds"
cp "$olm_dir"/deploy/chart/crds/*.yaml "$bin_dir/crds/"
chmod u+w "$bin_dir"/crds/*.yaml
printf '%s\n' "$(stamp)" >"$bin_dir/.stamp.tmp" && mv -f "$bin_dir/.stamp.tmp" "$bin_dir/.stamp"
build_log "built ${binaries[*]} and crds/ in $bin_dir in $((SECONDS - t0)) s"
printf '%s\n' "$bin_dir"
