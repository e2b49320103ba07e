import { ManualClock } from '../../../lib/runtime/clock.js';
import { WATCH_BLIND_AFTER_MS, WATCH_DEAD_AFTER_MS, WatchHeartbeat } from '../../../lib/runtime/cache/watch-heartbeat.js';

describe('WatchHeartbeat (manual clock)', () => {
  test('GIVEN a stream armed with timeoutSeconds 30 that hears nothing THEN it is blind after 30 + 5 s and dead after 30 + 15 s, once', () => {
    const clock = new ManualClock();
    const beat = new WatchHeartbeat(120_000, clock);
    let dead = 0;
    beat.arm(30, () => dead++);
    clock.advance(30_000 + WATCH_BLIND_AFTER_MS);
    expect(beat.blind()).toBe(false); // exactly at the limit: not yet
    clock.advance(1);
    expect(beat.blind()).toBe(true);
    expect(beat.silentForMs()).toBe(35_001);
    clock.advance(30_000 + WATCH_DEAD_AFTER_MS - 35_001 - 1);
    expect(dead).toBe(0);
    clock.advance(1);
    expect(dead).toBe(1);
    clock.advance(600_000);
    expect(dead).toBe(1);
    expect(clock.pending()).toBe(0);
  });

  test('GIVEN signs of life THEN the dead bound counts from the last one, and blindness ends with it', () => {
    const clock = new ManualClock();
    const beat = new WatchHeartbeat(120_000, clock);
    let dead = 0;
    beat.arm(30, () => dead++);
    clock.advance(40_000);
    beat.heard(); // e.g. a bookmark
    clock.advance(44_999);
    expect(dead).toBe(0);
    expect(beat.blind()).toBe(true);
    beat.heard();
    expect(beat.blind()).toBe(false);
    clock.advance(44_999);
    expect(dead).toBe(0);
    clock.advance(1);
    expect(dead).toBe(1);
  });

  test('GIVEN a stream that ended (disarm) THEN no dead callback, but silence still makes the watcher blind (a re-watch that gets no answer)', () => {
    const clock = new ManualClock();
    const beat = new WatchHeartbeat(120_000, clock);
    let dead = 0;
    beat.arm(40, () => dead++);
    clock.advance(10_000);
    beat.heard();
    beat.disarm();
    clock.advance(45_000);
    expect(beat.blind()).toBe(false);
    clock.advance(1);
    expect(beat.blind()).toBe(true);
    expect(dead).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  test('GIVEN a second arm THEN it replaces the first (one callback, the new bound), and a stream opened long after the last word gets its full bound', () => {
    const clock = new ManualClock();
    const beat = new WatchHeartbeat(120_000, clock);
    const fired: string[] = [];
    beat.arm(30, () => fired.push('first'));
    clock.advance(100_000); // first one died here
    expect(fired).toEqual(['first']);
    beat.arm(45, () => fired.push('second'));
    clock.advance(45_000 + WATCH_DEAD_AFTER_MS - 1);
    expect(fired).toEqual(['first']);
    clock.advance(1);
    expect(fired).toEqual(['first', 'second']);
    beat.arm(30, () => fired.push('third'), 500);
    beat.arm(30, () => fired.push('fourth'), 700);
    clock.advance(700);
    expect(fired).toEqual(['first', 'second', 'fourth']);
  });

  test('GIVEN no stream armed yet THEN blind only after the initial expected silence + 5 s', () => {
    const clock = new ManualClock();
    const beat = new WatchHeartbeat(120_000, clock);
    clock.advance(125_000);
    expect(beat.blind()).toBe(false);
    clock.advance(1);
    expect(beat.blind()).toBe(true);
  });
});
