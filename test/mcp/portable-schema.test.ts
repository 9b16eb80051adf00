import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { portabilityProblems, portableSchema } from '../../src/core/portable-schema';

describe('portableSchema', () => {
  it("drops a record of unknowns' empty additionalProperties, which allows any value as its absence does", () => {
    const exact = z.toJSONSchema(z.object({ extract: z.record(z.string(), z.unknown()) }));
    expect(portabilityProblems(exact)).toEqual(['.properties.extract: additionalProperties is the empty schema', '.properties.extract: propertyNames']);
    const portable = portableSchema(exact) as { properties: Record<string, unknown>; additionalProperties: unknown };
    expect(portable.properties.extract).toEqual({ type: 'object' });
    expect(portable.additionalProperties).toBe(false);
    expect(portabilityProblems(portable)).toEqual([]);
  });

  it('keeps fields named like keywords: under properties a key is a field, not a keyword', () => {
    const exact = z.toJSONSchema(z.object({ oneOf: z.number(), propertyNames: z.string(), additionalProperties: z.object({}) }));
    const portable = portableSchema(exact) as { properties: Record<string, unknown> };
    expect(Object.keys(portable.properties)).toEqual(['oneOf', 'propertyNames', 'additionalProperties']);
    expect(portabilityProblems(portable)).toEqual([]);
  });
});
