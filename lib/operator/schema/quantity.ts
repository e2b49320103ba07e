/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource, kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/).
 *
 * The API server re-serialises a Quantity in its canonical form: `0.5` comes back as `500m`, `1000m` as `1`,
 * `1.5Gi` as `1536Mi`. A "desired ⊆ actual" check that compares the strings would see a difference on
 * every reconcile and apply forever, so the runtime compares quantities by value.
 */

const BINARY_SUFFIXES: Record<string, bigint> = {
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
  Pi: 1024n ** 5n,
  Ei: 1024n ** 6n,
};

/** Decimal SI suffixes as powers of ten. */
const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$/;

/** A quantity's exact value as `coefficient × 10^exponent`, normalised so the coefficient has no trailing zeros. */
export interface QuantityValue {
  readonly coefficient: bigint;
  readonly exponent: number;
}

/**
 * Parses a quantity string (`1Gi`, `500m`, `0.5`, `1e3`, `1073741824`) or a number into its exact value.
 * Like the API server, values below 1n are rounded up to the nano scale.
 * Returns undefined when `input` is not a quantity.
 */
export function parseQuantity(input: string | number): QuantityValue | undefined {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input.trim();
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, sign, number, suffix = ''] = match;
  const [whole, fraction = ''] = number.split('.');
  let coefficient = BigInt((whole || '0') + fraction);
  let exponent = -fraction.length;
  if (suffix in BINARY_SUFFIXES) coefficient *= BINARY_SUFFIXES[suffix];
  else if (suffix.startsWith('e') || suffix.startsWith('E')) exponent += Number(suffix.slice(1));
  else exponent += DECIMAL_SUFFIXES[suffix];
  if (sign === '-') coefficient = -coefficient;
  // The API server keeps nano precision at most, rounding up (resource.Quantity's RoundUp(Nano)).
  return roundUp(coefficient, exponent, -9);
}

/**
 * `value` rounded up to `10^minExponent` when it is finer, the way resource.Quantity's `RoundUp(scale)`
 * does: -9 (nano) for every quantity, -3 (milli) for the values of a `ResourceList` (container
 * resources, ResourceQuota `hard`, LimitRange, PVC requests, Pod overhead), which core/v1 defaulting
 * rounds up (`SetDefaults_ResourceList`): `1.5n` is stored as `1m` there and as `2n` elsewhere.
 */
export function roundUpQuantity(value: QuantityValue, minExponent: number): QuantityValue {
  return roundUp(value.coefficient, value.exponent, minExponent);
}

function roundUp(coefficient: bigint, exponent: number, minExponent: number): QuantityValue {
  if (exponent < minExponent) {
    const divisor = 10n ** BigInt(minExponent - exponent);
    const rounded = coefficient / divisor;
    coefficient = rounded * divisor === coefficient || coefficient < 0n ? rounded : rounded + 1n;
    exponent = minExponent;
  }
  return normalise(coefficient, exponent);
}

function normalise(coefficient: bigint, exponent: number): QuantityValue {
  if (coefficient === 0n) return { coefficient: 0n, exponent: 0 };
  while (coefficient % 10n === 0n) {
    coefficient /= 10n;
    exponent += 1;
  }
  return { coefficient, exponent };
}

/**
 * A string that is equal for two quantities exactly when their values are equal, e.g. `5e-1` for `500m`.
 * Undefined when not a quantity.
 * @param minExponent round up to this power of ten first (see {@link roundUpQuantity}); @default -9 (nano)
 */
export function canonicalQuantity(input: string | number, minExponent = -9): string | undefined {
  const parsed = parseQuantity(input);
  const value = parsed && roundUpQuantity(parsed, minExponent);
  return value && `${value.coefficient}e${value.exponent}`;
}

/**
 * True when both inputs are quantities with the same value (`1Gi` and `1073741824`, `500m` and `0.5`,
 * `1000m` and `1`), after rounding both up to `10^minExponent` (@default -9, nano; -3 for ResourceList values).
 */
export function quantitiesEqual(a: string | number, b: string | number, minExponent = -9): boolean {
  const ca = canonicalQuantity(a, minExponent);
  return ca !== undefined && ca === canonicalQuantity(b, minExponent);
}
