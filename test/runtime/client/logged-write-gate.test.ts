/**
 * LoggedWriteGate (lib/runtime/client/write-gate.ts): the line each passed write leaves, and that no line
 * is lost when a later check deposes the process and it exits from inside that check. Pure logic; the
 * real processes and API server are in test/integration/leader-fencing.test.ts.
 */
import { LoggedWriteGate, WriteFencedError } from '../../../lib/runtime/client/write-gate.js';
import type { Logger } from '../../../lib/runtime/logger.js';

/** A logger that keeps its debug lines. */
function recordingLogger(): Logger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const ignore = () => undefined;
  return { lines, debug: (fields: object, msg: string) => lines.push({ ...fields, msg }), info: ignore, warn: ignore, error: ignore } as unknown as Logger & { lines: Record<string, unknown>[] };
}

test('GIVEN writes the check lets pass and one it refuses THEN each passed write is logged once, after the step that sent it, with the time its check began; the refused one throws and is not logged', async () => {
  const logger = recordingLogger();
  let open = true;
  const gate = new LoggedWriteGate((method, path) => {
    if (!open) throw new WriteFencedError(method, path, 'closed by the test');
  }, logger);
  const before = Date.now();
  gate.assertMayWrite('PATCH', '/apis/apps/v1/namespaces/a/deployments/d');
  gate.assertMayWrite('POST', '/api/v1/namespaces/a/configmaps');
  open = false;
  expect(() => gate.assertMayWrite('DELETE', '/api/v1/namespaces/a/configmaps/c')).toThrow(WriteFencedError);
  expect(logger.lines).toEqual([]); // not between the check and the write
  await Promise.resolve();
  expect(logger.lines.map((l) => `${l.msg}: ${l.method} ${l.path}`)).toEqual([
    'write passed the leader gate: PATCH /apis/apps/v1/namespaces/a/deployments/d',
    'write passed the leader gate: POST /api/v1/namespaces/a/configmaps',
  ]);
  for (const line of logger.lines) {
    const at = Date.parse(String(line.gateCheckedAt));
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  }
  await Promise.resolve();
  expect(logger.lines).toHaveLength(2);
});

test('GIVEN a write that passed WHEN a later check in the same step deposes the owner, which flushes and exits from inside that check THEN the passed write\'s line was written before the exit', () => {
  const logger = recordingLogger();
  let linesAtExit: string[] | undefined;
  let checks = 0;
  const gate: LoggedWriteGate = new LoggedWriteGate((method, path) => {
    if (checks++ === 0) return;
    // What the Manager's onStoppedLeading does before `process.exit(1)`: the microtask would never run.
    gate.flush();
    linesAtExit = logger.lines.map((l) => `${l.method} ${l.path}`);
    throw new WriteFencedError(method, path, 'deposed');
  }, logger);
  gate.assertMayWrite('PATCH', '/apis/example.com/v1/namespaces/a/widgets/w/status');
  expect(() => gate.assertMayWrite('PATCH', '/apis/events.k8s.io/v1/namespaces/a/events/e')).toThrow(WriteFencedError);
  expect(linesAtExit).toEqual(['PATCH /apis/example.com/v1/namespaces/a/widgets/w/status']);
});
