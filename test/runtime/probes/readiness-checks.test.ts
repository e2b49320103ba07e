import { readinessChecks } from '../../../lib/runtime/probes/readiness-checks.js';

const run = async (checks: Record<string, () => unknown>) =>
  Object.fromEntries(await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await Promise.resolve().then(check).then((v) => v !== false, () => false)])));

describe('readinessChecks', () => {
  test('GIVEN no webhooks WHEN caches are not synced THEN /readyz fails on informers only', async () => {
    const checks = readinessChecks({ informersSynced: () => false, webhooksReady: () => undefined, servesWebhooks: false, servesConversion: false });
    expect(await run(checks)).toEqual({ informers: false, webhooks: true });
  });

  test('GIVEN admission webhooks only THEN both the caches and the webhook server count', async () => {
    const checks = readinessChecks({ informersSynced: () => false, webhooksReady: () => true, servesWebhooks: true, servesConversion: false });
    expect(await run(checks)).toEqual({ informers: false, webhooks: true });
    expect(() => checks.webhooks!()).not.toThrow();
  });

  test('GIVEN a conversion webhook WHEN caches are not synced but the webhook server listens THEN /readyz passes (the caches may need /convert through the Service)', async () => {
    let listening: boolean | undefined;
    const checks = readinessChecks({ informersSynced: () => false, webhooksReady: () => listening, servesWebhooks: true, servesConversion: true });
    expect(Object.keys(checks)).toEqual(['webhooks']);
    expect(() => checks.webhooks!()).toThrow('webhook server not listening yet');
    listening = true;
    expect(await run(checks)).toEqual({ webhooks: true });
  });
});
