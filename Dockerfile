# The image of this repository's example operators (operators/): the repository in /app. Their
# synthesized Deployments (operators/example-deployment.ts) name it and give the command and args:
# `node bin/cdk8s-operator.js run --module operators/index.ts --operators <name> --metrics-bind-address=:8443 …`.
# A user's operator runs from the user's own image (the Dockerfile that `cdk8s-operator init` generates).
#
#   docker build -t cdk8s-operator-sdk-examples:0.1.0 .
#
# The repository runs from its TypeScript sources, which tsx (a runtime dependency) loads: no build step.
# Not built in CI: the development machines have no Docker engine.

# --- dependencies: production only, from the lockfile, no install scripts -------------------------------
FROM node:26-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: esbuild (under tsx) ships its binary as an optional dependency; its install script
# only verifies it. cdk8s, constructs and zod (the SDK's peer dependencies) and cdk8s-plus-28 (the
# examples' choice) are devDependencies of this repository, which the examples need at run time: they
# are moved to dependencies first, at the versions package.json and the lockfile pin. (A user's image
# gets them from the user's own dependencies.)
RUN node -e "const fs = require('fs'); const p = JSON.parse(fs.readFileSync('package.json', 'utf8')); \
      for (const n of ['cdk8s', 'cdk8s-plus-28', 'constructs', 'zod']) { p.dependencies[n] = p.devDependencies[n]; delete p.devDependencies[n]; } \
      fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" \
 && npm ci --omit=dev --ignore-scripts && npm cache clean --force

# --- runtime --------------------------------------------------------------------------------------------
FROM node:26-alpine
ENV NODE_ENV=production
# As in the image `init` writes: 2 MB semi-spaces, less RSS for about 10 % more CPU (docs/reference/benchmark.md, "Memory at start").
ENV NODE_OPTIONS=--max-semi-space-size=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY lib ./lib
COPY operators ./operators
# Numeric uid/gid so the pod's runAsNonRoot check passes (65532 = distroless "nonroot"; OPERATOR_UID in
# lib/operator/operator-deployment.ts). Everything above stays root-owned and read-only to it; the
# Deployment mounts an emptyDir at /tmp, where tsx keeps its transform cache.
USER 65532:65532
# secure metrics (HTTPS), probes (/healthz, /readyz)
EXPOSE 8443 8081
ENTRYPOINT ["node", "bin/cdk8s-operator.js"]
CMD ["--help"]
