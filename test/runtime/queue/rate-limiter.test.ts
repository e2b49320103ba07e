import { ManualClock } from '../../../lib/runtime/clock.js';
import {
  BucketRateLimiter,
  ExponentialRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from '../../../lib/runtime/queue/rate-limiter.js';

describe('ExponentialRateLimiter', () => {
  test('GIVEN repeated failures THEN the delay doubles from 5 ms and stops at 1000 s', () => {
    const limiter = new ExponentialRateLimiter();
    const delays = Array.from({ length: 30 }, () => limiter.when('k'));
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(Math.max(...delays)).toBe(1_000_000);
    expect(delays[29]).toBe(1_000_000);
    expect(limiter.numRequeues('k')).toBe(30);
  });

  test('GIVEN a huge number of failures THEN the delay stays at the cap (no overflow to NaN/Infinity)', () => {
    const limiter = new ExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 60_000 });
    let last = 0;
    for (let i = 0; i < 2000; i++) last = limiter.when('k');
    expect(last).toBe(60_000);
  });

  test('GIVEN two keys THEN their backoffs are independent, and forget resets one', () => {
    const limiter = new ExponentialRateLimiter();
    limiter.when('a');
    limiter.when('a');
    expect(limiter.when('b')).toBe(5);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
  });
});

describe('BucketRateLimiter', () => {
  test('GIVEN a full bucket THEN burst requests pass at once and the next ones queue up at 1/qps', () => {
    const clock = new ManualClock();
    const limiter = new BucketRateLimiter({ qps: 10, burst: 3, clock });
    expect([limiter.when(), limiter.when(), limiter.when()]).toEqual([0, 0, 0]);
    expect(limiter.when()).toBeCloseTo(100);
    expect(limiter.when()).toBeCloseTo(200);
  });

  test('GIVEN an emptied bucket WHEN time passes THEN tokens refill, up to burst only', () => {
    const clock = new ManualClock();
    const limiter = new BucketRateLimiter({ qps: 10, burst: 2, clock });
    limiter.when();
    limiter.when();
    clock.advance(100);
    expect(limiter.when()).toBe(0);
    expect(limiter.when()).toBeCloseTo(100);
    clock.advance(60_000);
    expect([limiter.when(), limiter.when()]).toEqual([0, 0]);
    expect(limiter.when()).toBeGreaterThan(0);
  });
});

describe('defaultControllerRateLimiter', () => {
  test('GIVEN the default limiter THEN it is the max of per-key backoff and the 10 qps / 100 burst bucket', () => {
    const clock = new ManualClock();
    const limiter = defaultControllerRateLimiter(clock);
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('a')).toBe(10);
    for (let i = 0; i < 98; i++) limiter.when(`k${i}`);
    // The bucket is empty now: a first failure of a new key waits for a token (100 ms), not 5 ms.
    expect(limiter.when('fresh')).toBeCloseTo(100);
    expect(limiter.numRequeues('a')).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });

  test('GIVEN MaxOf with no limiters THEN it throws', () => {
    expect(() => new MaxOfRateLimiter()).toThrow(/at least one/);
  });
});
