// Preloaded (`node --require`) by bench/idle-cpu.ts into a `run` process: every monitorEventLoopDelay()
// samples at IDLE_CPU_PRECISION_MS instead of what the caller asked (prom-client's default metrics).
const perfHooks = require('node:perf_hooks');

const resolution = Number(process.env.IDLE_CPU_PRECISION_MS);
const original = perfHooks.monitorEventLoopDelay;
perfHooks.monitorEventLoopDelay = (options) => original({ ...options, resolution });
