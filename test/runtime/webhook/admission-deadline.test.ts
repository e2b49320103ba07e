import { ManualClock } from '../../../lib/runtime/clock.js';
import { AdmissionDeadline, AdmissionDeadlineError, admissionBudgetMs } from '../../../lib/runtime/webhook/admission-deadline.js';

const never = () => new Promise<never>(() => {});

describe('admission deadline', () => {
  test('GIVEN timeoutSeconds THEN the budget leaves a margin of 1 s, at most a fifth', () => {
    expect(admissionBudgetMs(10)).toBe(9000);
    expect(admissionBudgetMs(30)).toBe(29000);
    expect(admissionBudgetMs(2)).toBe(1600);
    expect(admissionBudgetMs(1)).toBe(800);
  });

  test('GIVEN a read that never answers WHEN the budget passes THEN it fails naming the read, and its signal is aborted', async () => {
    const clock = new ManualClock();
    const deadline = new AdmissionDeadline(10, clock);
    let signal: AbortSignal | undefined;
    const result = deadline.run('validateAdmission', () => deadline.read('reading ConfigMap a/policy', (s) => ((signal = s), never())));
    await Promise.resolve();
    clock.advance(8999);
    expect(signal?.aborted).toBe(false);
    clock.advance(1);
    const err = await result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdmissionDeadlineError);
    expect((err as AdmissionDeadlineError).waitingFor).toBe('reading ConfigMap a/policy');
    expect((err as Error).message).toMatch(/^reading ConfigMap a\/policy did not finish within 9000 ms \(the webhook's timeoutSeconds 10/);
    expect(signal?.aborted).toBe(true);
  });

  test('GIVEN a hook function that never resolves and reads nothing WHEN the budget passes THEN it fails naming the function', async () => {
    const clock = new ManualClock();
    const deadline = new AdmissionDeadline(1, clock);
    const result = deadline.run('validateAdmission', never);
    clock.advance(800);
    await expect(result).rejects.toMatchObject({ waitingFor: 'validateAdmission', budgetMs: 800 });
  });

  test('GIVEN a hook that swallows the aborted read WHEN the budget passes THEN it still fails at the deadline', async () => {
    const clock = new ManualClock();
    const deadline = new AdmissionDeadline(10, clock);
    const result = deadline.run('validateAdmission', async () => {
      await deadline.read('reading Service a/b', (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))))).catch(() => undefined);
      return [];
    });
    await Promise.resolve();
    clock.advance(9000);
    await expect(result).rejects.toBeInstanceOf(AdmissionDeadlineError);
  });

  test('GIVEN a hook that finishes in time WHEN done THEN its result, and no timer is left', async () => {
    const clock = new ManualClock();
    const deadline = new AdmissionDeadline(10, clock);
    await expect(deadline.run('validateAdmission', async () => deadline.read('reading X a/b', async () => 'ok'))).resolves.toBe('ok');
    deadline.done();
    expect(clock.pending()).toBe(0);
  });
});
