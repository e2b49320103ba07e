#!/usr/bin/env bash
# `npm run build` (and `prepack`): compiles lib/ into the published package's JavaScript and .d.ts.
#   out/esm/  every module, ESM (this package is "type": "module"): the CLI, runtime, control plane
#   out/validator/validator.wasm  the built-in kinds' validator (tools/validator/build.sh, cached;
#             needs Go the first time), which lib/validator/ loads from the installed package
#   out/cjs/  the pure entries (root and testing) and what they import, CommonJS, for `require`,
#             ts-node and CommonJS jest; its package.json marks the folder as CommonJS
# The repository itself runs from the TypeScript sources (tsx, ts-jest) and never reads out/.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf out
npx tsc -p tsconfig.build.json
npx tsc -p tsconfig.build-cjs.json
printf '{ "type": "commonjs" }\n' > out/cjs/package.json
mkdir -p out/validator
cp "$(bash tools/validator/build.sh)" out/validator/validator.wasm
