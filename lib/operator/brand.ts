/**
 * Class identity that survives two copies of the SDK.
 *
 * A user's operator module can load its own copy of this package (CommonJS `require` next to the CLI's
 * ESM import, a bundler, a nested node_modules). Plain `instanceof` then fails between the copies: an
 * invalid CR thrown by one copy's `parseCustomResource` is not "a CustomResourceValidationError" to the other, and a
 * user's `TerminalError` would be retried. A branded class is recognised by a registry symbol
 * (`Symbol.for`, shared by every copy in the process) on its prototype, so `instanceof` and
 * {@link hasBrand} answer the same for objects made by any copy.
 *
 * Subclasses a user declares keep plain `instanceof` semantics: only the branded class itself
 * answers by brand.
 */

/** The registry symbol that marks instances of the branded class `name`. */
function brandSymbol(name: string): symbol {
  return Symbol.for(`cdk8s-operator-sdk/${name}`);
}

/**
 * Brands `cls` as `name`: every instance (of this copy, of any other copy, and of subclasses) carries the
 * brand through its prototype, and `value instanceof cls` becomes true for any branded instance.
 * Call it once per class, from a static block.
 */
export function brandClass(cls: abstract new (...args: never[]) => object, name: string): void {
  const symbol = brandSymbol(name);
  Object.defineProperty(cls.prototype, symbol, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      if (this === cls && hasBrand(value, name)) return true;
      return Function.prototype[Symbol.hasInstance].call(this, value);
    },
  });
}

/** True when `value` is an instance of the class branded `name` (or of a subclass), from any copy of the SDK. */
export function hasBrand(value: unknown, name: string): boolean {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  return (value as Record<symbol, unknown>)[brandSymbol(name)] === true;
}
