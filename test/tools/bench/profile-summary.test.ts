import { mergeSummaries, summarizeProfile, type CpuProfile } from '../../../bench/profile-summary.js';

/**
 * root ─┬─ (idle)
 *       ├─ (garbage collector)
 *       └─ request (lib/runtime/client/api-client.js) ── parse (native JSON.parse)
 *                                                   └── writeHead (node:_http_outgoing)
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: { functionName: '(root)', url: '' }, children: [2, 3, 4] },
    { id: 2, callFrame: { functionName: '(idle)', url: '' } },
    { id: 3, callFrame: { functionName: '(garbage collector)', url: '' } },
    { id: 4, callFrame: { functionName: 'request', url: 'file:///repo/bench/.out/lib/runtime/client/api-client.js', lineNumber: 9 }, children: [5, 6] },
    { id: 5, callFrame: { functionName: 'parse', url: '' } },
    { id: 6, callFrame: { functionName: 'writeHead', url: 'node:_http_outgoing' } },
  ],
  startTime: 1_000_000,
  endTime: 1_000_000 + 1_000_000,
  // one sample per 100 ms: each sample's time is the next delta (the last one counts 0)
  samples: [2, 4, 5, 5, 6, 3, 2, 4, 4, 2],
  timeDeltas: [0, ...Array(9).fill(100_000)],
};

describe('bench profile summary', () => {
  test('GIVEN a profile WHEN summarised whole THEN each sample counts for its leaf-first category and its leaf function', () => {
    const s = summarizeProfile(profile, { file: 'p.cpuprofile' });
    const seconds = Object.fromEntries(s.rows.map((r) => [r.category, r.seconds]));
    // the last sample (idle) has no following delta: 200 ms of idle counted, not 300
    expect(seconds).toEqual({
      'idle': 0.2,
      'garbage collection': 0.1,
      'JSON parse of API responses': 0.2,
      'HTTP client (api-client, credentials, node:http/tls/net)': 0.4,
    });
    expect(s.busySeconds).toBe(0.7);
    expect(s.windowMs).toEqual([0, 1000]);
    expect(s.functions.map((f) => [f.function, f.seconds])).toEqual([
      ['request (lib/runtime/client/api-client.js:10)', 0.3],
      ['parse', 0.2],
      ['writeHead (node:_http_outgoing)', 0.1],
    ]);
    expect(s.rows.find((r) => r.category === 'idle')!.percentOfBusy).toBeNull();
  });

  test('GIVEN a window WHEN summarised THEN only samples within it count', () => {
    const s = summarizeProfile(profile, { fromMs: 200, toMs: 400 });
    expect(s.rows.map((r) => [r.category, r.seconds])).toEqual([['JSON parse of API responses', 0.2], ['HTTP client (api-client, credentials, node:http/tls/net)', 0.1]]);
    expect(s.windowMs).toEqual([200, 400]);
  });

  test('GIVEN two summaries WHEN merged THEN seconds add up and shares are of the summed busy time', () => {
    const a = summarizeProfile(profile, { file: 'a' });
    const b = summarizeProfile(profile, { file: 'b', fromMs: 200, toMs: 400 });
    const m = mergeSummaries([a, b]);
    expect(m.file).toBe('a, b');
    expect(m.busySeconds).toBe(1);
    expect(m.rows.find((r) => r.category === 'JSON parse of API responses')).toEqual({ category: 'JSON parse of API responses', seconds: 0.4, percentOfBusy: 40 });
    expect(m.functions.slice(0, 2)).toEqual([
      { function: 'parse', category: 'JSON parse of API responses', seconds: 0.4, percentOfBusy: 40 },
      { function: 'request (lib/runtime/client/api-client.js:10)', category: 'HTTP client (api-client, credentials, node:http/tls/net)', seconds: 0.3, percentOfBusy: 30 },
    ]);
  });
});
