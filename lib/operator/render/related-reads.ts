/**
 * What render read of the related objects it was handed, per related declaration: the top-level
 * fields (`metadata`, `data`, `spec`, `status`, …) it accessed. The runtime uses it to decide which
 * changes of a related object can matter to render (see `RelatedDeclaration.changeMatters`): a label
 * added to a ConfigMap whose `data` alone render reads reconciles none of the CRs that reference it.
 *
 * How: each related object handed to render in `context.related[key]` is a stand-in, a frozen object
 * with one enumerable getter per own field of the cached object; a getter records its field and returns
 * the cached object's value itself (the same, deeply frozen object). A field the object does not have
 * (`cm.binaryData` of a ConfigMap without one, `'binaryData' in cm`) is recorded by the stand-in's
 * prototype, a Proxy over `Object.prototype` that forwards everything else, so that a change adding
 * the field still matters. Reading `cm.data.greeting` records `data`; anything that reads every field
 * (spread, `JSON.stringify`, `structuredClone`, `Object.entries`, `console.log`) records every field,
 * which is conservative. The stand-in itself is not a `Proxy`: `structuredClone` of a Proxy throws, and
 * the informer's docs tell callers to `structuredClone` a cached object before changing it.
 *
 * Reads only accumulate, over every CR and render, until the process restarts: whether a field matters
 * is a property of the operator's code, and a branch that reads a field for the first time can only be
 * taken after a change of something render already reads (or of the CR, or of its children), whose
 * reconcile reads the current cache.
 *
 * The operator's `status()` hook is handed stand-ins too (reader `status`): its reads count for which
 * related changes reconcile a CR ({@link RelatedReads.fieldsRead}), but not for whether render runs
 * again ({@link RelatedReads.renderFieldsRead}, the render memo's).
 */
import type { KubeResource } from './render-context.js';

/** The stand-ins' own `util.inspect` (console.log) hook: shows the cached object, and counts as reading all of it. */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

export class RelatedReads {
  /** Declaration key → the top-level fields render read of its objects (present once one was handed to render). */
  private readonly byDeclaration = new Map<string, Set<string>>();
  /** The same, of render's reads alone (what the render memo counts). */
  private readonly byDeclarationOfRender = new Map<string, Set<string>>();
  /** Reader and declaration key → the prototype of its stand-ins, which records reads of fields an object lacks. */
  private readonly prototypes = new Map<string, object>();

  /**
   * A stand-in for `object`, handed to render under the declaration `related`: it reads as `object`
   * (same keys, same values, frozen) and records each top-level field read.
   * @param reader who reads it: `render`, or the operator's `status()` hook. @default 'render'
   */
  track(related: string, object: KubeResource, reader: 'render' | 'status' = 'render'): KubeResource {
    const all = this.byDeclaration.get(related) ?? new Set<string>();
    this.byDeclaration.set(related, all);
    const own = reader === 'render' ? (this.byDeclarationOfRender.get(related) ?? new Set<string>()) : undefined;
    if (own) this.byDeclarationOfRender.set(related, own);
    const fields = { add: (field: string) => (all.add(field), own?.add(field)) };
    const prototypeKey = `${reader}\u0000${related}`;
    const prototype = this.prototypes.get(prototypeKey) ?? absentFieldRecorder(fields);
    this.prototypes.set(prototypeKey, prototype);
    const standIn = Object.create(prototype) as Record<string | symbol, unknown>;
    for (const field of Object.keys(object)) {
      Object.defineProperty(standIn, field, {
        enumerable: true,
        get: () => {
          fields.add(field);
          return (object as Record<string, unknown>)[field];
        },
      });
    }
    Object.defineProperty(standIn, INSPECT, {
      enumerable: false,
      value: () => {
        for (const field of Object.keys(object)) fields.add(field);
        return object;
      },
    });
    return Object.freeze(standIn) as unknown as KubeResource; // cast: a stand-in built by defineProperty reads as `object`
  }

  /**
   * The top-level fields render or `status()` read of the objects of declaration `related`, over every
   * call so far; `undefined` while none of its objects has been handed to either yet (then every field
   * may matter).
   */
  fieldsRead(related: string): ReadonlySet<string> | undefined {
    return this.byDeclaration.get(related);
  }

  /** Like {@link fieldsRead}, of render's reads alone: `undefined` while none of its objects has been handed to render. */
  renderFieldsRead(related: string): ReadonlySet<string> | undefined {
    return this.byDeclarationOfRender.get(related);
  }
}

/** `Object.prototype`, recording each string key looked up that it does not have (a field the stand-in lacks). */
function absentFieldRecorder(fields: { add(field: string): unknown }): object {
  const record = (target: object, key: string | symbol) => {
    if (typeof key === 'string' && !(key in target)) fields.add(key);
  };
  return new Proxy(Object.prototype, {
    get: (target, key, receiver) => (record(target, key), Reflect.get(target, key, receiver)),
    has: (target, key) => (record(target, key), Reflect.has(target, key)),
  });
}
