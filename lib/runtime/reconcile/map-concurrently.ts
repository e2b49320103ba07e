/**
 * `fn` applied to every item with at most `limit` calls in flight; resolves to the results in the order
 * of `items` (not of completion), like `Promise.all(items.map(fn))` with a cap.
 *
 * @param limit calls in flight at most; values below 1 count as 1.
 * @throws the first rejection of `fn` (calls already started still run to their end; no new one starts).
 */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T, index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, Math.floor(limit)), items.length) }, lane));
  return results;
}
