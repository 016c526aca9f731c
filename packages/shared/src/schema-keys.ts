import { z } from 'zod';

/** `schema` without the wrappers that do not change which keys it takes. */
function unwrapped(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable || inner instanceof z.ZodDefault) inner = inner.unwrap() as z.ZodType;
  return inner;
}

/** The objects a value at this point may be: one, or one per option of a union. */
function objectsOf(schema: z.ZodType): z.ZodObject[] {
  const inner = unwrapped(schema);
  if (inner instanceof z.ZodObject) return [inner];
  if (inner instanceof z.ZodUnion) return (inner.options as z.ZodType[]).flatMap(objectsOf);
  return [];
}

/** One option of a union as a message shows it: `{days}`, or with its discriminator's value `{follow: true, maxHops}`. */
function describeOption(option: z.ZodObject, discriminator: string | undefined): string {
  const keys = Object.keys(option.shape).map((key) => {
    const field = option.shape[key];
    if (key !== discriminator || !(field instanceof z.ZodLiteral)) return key;
    return `${key}: ${[...field.values].map((v) => JSON.stringify(v)).join(' | ')}`;
  });
  return `{${keys.join(', ')}}`;
}

/**
 * What the object at `path` in `schema` takes, as a message names it beside an unknown key: the
 * keys of an object (`ms, measures`), or each shape of a union (`{days} or {lastPerEndpoint}`;
 * for a discriminated union with its discriminator's value: `{follow: false} or {follow: true,
 * maxHops}`). Optional, nullable and defaulted values are seen through; a union met on the way
 * is searched option by option. Null when `path` does not lead to an object.
 */
export function keysTaken(schema: z.ZodType, path: readonly PropertyKey[]): string | null {
  let here: z.ZodType | undefined = schema;
  for (const key of path) {
    if (typeof key !== 'string') return null;
    here = objectsOf(here)
      .map((object) => object.shape[key] as z.ZodType | undefined)
      .find((field) => field !== undefined);
    if (here === undefined) return null;
  }
  const inner = unwrapped(here);
  if (inner instanceof z.ZodObject) return Object.keys(inner.shape).join(', ');
  if (!(inner instanceof z.ZodUnion)) return null;
  const discriminator = inner instanceof z.ZodDiscriminatedUnion ? inner.def.discriminator : undefined;
  const options = objectsOf(inner).map((option) => describeOption(option, discriminator));
  return options.length <= 1 ? (options[0] ?? null) : `${options.slice(0, -1).join(', ')} or ${options.at(-1)}`;
}
