import { goalsOf, holdIntervals, holdViolations, objectsWrittenByTwo, parseLogLines, unsplitResources, watchEventLines, writeRecords, writtenByTwoWithoutHandOver, type ReplicaLog } from '../../../bench/shard-records.js';

const hands = (time: number, taken: number[], released: number[] = []) => ({ msg: 'sharding: buckets changed hands', time, taken, released });
const wrote = (time: number, name: string) => ({ msg: 'reconciled', time, namespace: 'ns', name });
/** Bucket of a CR in these tests: the number in its name. */
const bucketOf = (_ns: string, name: string) => Number(name.replace(/\D/g, ''));

describe('bench shard records', () => {
  test('GIVEN log text with JSON lines, a cut line and plain text WHEN parsed THEN only whole JSON records are kept', () => {
    expect(parseLogLines('{"msg":"a","time":1}\nnot json\n{"msg":"b"\n{"msg":"c","time":2}\n')).toEqual([{ msg: 'a', time: 1 }, { msg: 'c', time: 2 }]);
  });

  test('GIVEN a replica that took, released and took again, and a killed one WHEN hold intervals are built THEN each hold ends at its release, its kill, or never', () => {
    const logs: ReplicaLog[] = [
      { replica: 'a', records: [hands(10, [1, 2]), hands(20, [], [2]), hands(30, [2])] },
      { replica: 'b', records: [hands(21, [3])], killedAt: 40 },
    ];
    expect(holdIntervals(logs)).toEqual([
      { replica: 'a', bucket: 2, from: 10, to: 20 },
      { replica: 'a', bucket: 1, from: 10, to: Number.POSITIVE_INFINITY },
      { replica: 'a', bucket: 2, from: 30, to: Number.POSITIVE_INFINITY },
      { replica: 'b', bucket: 3, from: 21, to: 40 },
    ]);
  });

  test('GIVEN a clean hand-over of bucket 2 WHEN checked THEN no violation; GIVEN an overlap and a write outside a hold THEN both are named', () => {
    const clean: ReplicaLog[] = [
      { replica: 'a', records: [hands(10, [1]), wrote(15, 'cr-1'), hands(20, [], [1])] },
      { replica: 'b', records: [hands(25, [1]), wrote(26, 'cr-1')] },
    ];
    expect(holdViolations(clean, bucketOf)).toEqual([]);
    const broken: ReplicaLog[] = [
      { replica: 'a', records: [hands(10, [1]), wrote(15, 'cr-1'), wrote(16, 'cr-2'), hands(30, [], [1])] },
      { replica: 'b', records: [hands(25, [1])] },
    ];
    expect(holdViolations(broken, bucketOf)).toEqual(['bucket 1: a [10, 30] and b [25, Infinity]', 'a wrote ns/cr-2 (bucket 2) at 16 outside its hold']);
  });

  test('GIVEN writes by two replicas to one object inside and outside a window WHEN counted THEN only the object written by both inside the window is named', () => {
    const writes = writeRecords([
      { replica: 'a', records: [wrote(5, 'cr-1'), wrote(12, 'cr-2')] },
      { replica: 'b', records: [wrote(11, 'cr-1'), wrote(13, 'cr-2'), wrote(14, 'cr-3')] },
    ]);
    expect(writes.map((w) => w.time)).toEqual([5, 11, 12, 13, 14]);
    expect(objectsWrittenByTwo(writes, 10, 20)).toEqual({ 'ns/cr-2': ['a', 'b'] });
  });

  test('GIVEN an object written by a then b WHEN its bucket was released by a before b took it THEN it is a writer change, not a double writer; WHEN the holds overlap or a write is outside a hold THEN it is one', () => {
    const handedOver: ReplicaLog[] = [
      { replica: 'a', records: [hands(10, [1]), wrote(15, 'cr-1'), hands(20, [], [1])] },
      { replica: 'b', records: [hands(22, [1]), wrote(25, 'cr-1'), hands(22, [2]), wrote(26, 'cr-2')] },
    ];
    const writesOf = (logs: ReplicaLog[]) => writeRecords(logs);
    expect(objectsWrittenByTwo(writesOf(handedOver), 0, 100)).toEqual({ 'ns/cr-1': ['a', 'b'] });
    expect(writtenByTwoWithoutHandOver(writesOf(handedOver), holdIntervals(handedOver), bucketOf, 0, 100)).toEqual({});
    const overlapping: ReplicaLog[] = [
      { replica: 'a', records: [hands(10, [1]), wrote(15, 'cr-1'), hands(30, [], [1])] },
      { replica: 'b', records: [hands(22, [1]), wrote(25, 'cr-1')] },
    ];
    expect(writtenByTwoWithoutHandOver(writesOf(overlapping), holdIntervals(overlapping), bucketOf, 0, 100)).toEqual({ 'ns/cr-1': ['a', 'b'] });
    const outside: ReplicaLog[] = [
      { replica: 'a', records: [hands(10, [1]), wrote(15, 'cr-1'), hands(20, [], [1])] },
      { replica: 'b', records: [wrote(25, 'cr-1')] },
    ];
    expect(writtenByTwoWithoutHandOver(writesOf(outside), holdIntervals(outside), bucketOf, 0, 100)).toEqual({ 'ns/cr-1': ['a', 'b'] });
    // Outside the window: not counted.
    expect(writtenByTwoWithoutHandOver(writesOf(overlapping), holdIntervals(overlapping), bucketOf, 20, 100)).toEqual({});
  });

  test('GIVEN medians of the three peers WHEN the goals are evaluated THEN each ratio is compared with its limit, and a missing peer gives null', () => {
    const goals = goalsOf({
      ours: { readySeconds: 100, cpuConvergeSeconds: 12, peakRssBytes: 200, operatorRequests: 4040, operatorRequestsConverging: 4010, rssGrowthPer1000ObjectsBytes: 10, watchEvents: 1000, idleWrites: 0 },
      shards: { readySeconds: 80, cpuConvergeSeconds: 24, maxReplicaCpuConvergeSeconds: 7, maxReplicaPeakRssBytes: 90, maxReplicaWatchEvents: 410 },
      controllerRuntime: { readySeconds: 90, cpuConvergeSeconds: 10, operatorRequests: 4000, operatorRequestsConverging: 4010, rssGrowthPer1000ObjectsBytes: 12 },
    });
    expect(goals.map((g) => [g.value, g.met])).toEqual([[1, true], [1.01, false], [1.2, true], [2.4, false], [1.11, false], [0.89, true], [0.83, true], [0, true], [0.58, false], [0.45, false], [0.41, false]]);
    expect(goals.map((g) => g.peer)).toEqual(['ours', 'ours', 'ours', 'ours-3-shards', 'ours', 'ours-3-shards', 'ours', 'ours', 'ours-3-shards', 'ours-3-shards', 'ours-3-shards']);
    expect(goalsOf({ ours: { readySeconds: 1, cpuConvergeSeconds: 1, peakRssBytes: 1 } }).every((g) => g.met === null)).toBe(true);
    expect(goalsOf({}).every((g) => g.value === null && g.met === null)).toBe(true);
  });

  test('GIVEN one replica\'s and a shard\'s watch events WHEN compared THEN the resources the shard heard about as often (≥ 0.9×) are named as not split', () => {
    const one = { replica: 'ours', byResource: { 'deployments.apps': 100, 'memcacheds.cache.example.com': 90, pods: 80, services: 0 }, total: 270 };
    const shard = { replica: 'shard-2', byResource: { 'deployments.apps': 41, 'memcacheds.cache.example.com': 95, pods: 72 }, total: 208 };
    expect(unsplitResources(one, shard)).toEqual(['memcacheds.cache.example.com', 'pods']);
    expect(unsplitResources(one, shard, 0.95)).toEqual(['memcacheds.cache.example.com']);
    const lines = watchEventLines(one, shard, '410 of 1000 CRs');
    expect(lines[0]).toBe("  watch events while converging: shard-2 (the busiest shard, 410 of 1000 CRs) received 208, 0.77× one replica's 270");
    expect(lines[2]).toContain('not split by bucket (the busiest shard received ≥ 0.9× one replica\'s events): memcacheds.cache.example.com, pods');
    expect(watchEventLines(one, { ...shard, byResource: { 'deployments.apps': 41 }, total: 41 }, 'x')).toHaveLength(2);
  });
});
