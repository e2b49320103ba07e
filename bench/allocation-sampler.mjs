/**
 * A preload (`node --import`) that samples what a process allocates, for bench/PROFILE.md: V8's sampling
 * heap profiler with the objects that minor and major GCs collected kept in the profile, so it counts
 * every sampled allocation (what makes the garbage collector run), not only what is still alive at the
 * end as `--heap-prof` does. The profile is written when the process exits, to
 * `$ALLOCATION_PROFILE_DIR/Allocation.<pid>.heapprofile` (default the working directory); summarize it
 * with bench/allocation-summary.ts.
 *
 * ```sh
 * ALLOCATION_PROFILE_DIR=/tmp/alloc npm run bench:peers -- --crs 1000 --reps 1 --peers ours \
 *   --ours-node-args "--max-semi-space-size=2 --import $PWD/bench/allocation-sampler.mjs"
 * ```
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const session = new Session();
session.connect();
session.post('HeapProfiler.enable');
// One sample per 16 KiB allocated on average (V8's default is 32 KiB).
session.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
process.on('exit', () => {
  // The in-thread session answers synchronously, so this runs before the process ends.
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return void process.stderr.write(`allocation-sampler: ${err.message}\n`);
    writeFileSync(join(process.env.ALLOCATION_PROFILE_DIR ?? '.', `Allocation.${process.pid}.heapprofile`), JSON.stringify(result.profile));
  });
});
