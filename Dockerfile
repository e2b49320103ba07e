# The operator image: `node bin/cdk8s-operator.js <args>`, where the synthesized Deployment supplies the
# args (`run --operators <name> --metrics-bind-address=:8080 --health-probe-bind-address=:8081 …`).
#
#   docker build -t cdk8s-operator-sdk:0.1.0 .
#
# The SDK ships TypeScript sources that tsx (a runtime dependency) loads, so there is no build step.
# Not built in CI: the development machines have no Docker engine.

# --- dependencies: production only, from the lockfile, no install scripts -------------------------------
FROM node:20-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: esbuild (under tsx) ships its binary as an optional dependency; its install script
# only verifies it.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# --- runtime --------------------------------------------------------------------------------------------
FROM node:20-alpine
ENV NODE_ENV=production
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
# metrics, probes (/healthz, /readyz)
EXPOSE 8080 8081
ENTRYPOINT ["node", "bin/cdk8s-operator.js"]
CMD ["--help"]
