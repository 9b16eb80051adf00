/**
 * JSON Schema that every model provider's tool-calling accepts. Zod's JSON Schema is exact, but some
 * clients refuse parts of it (the MCP Inspector's strict check, OpenAI's and Gemini's function schemas):
 * tuples (`prefixItems` with `items: false`), multi-type `type` arrays, `oneOf`, `propertyNames`, and the
 * empty schema `additionalProperties: {}` (zod's record of unknowns; the Inspector warns on each). Each is
 * rewritten into a looser form that accepts at least the same inputs; the pipeline still validates every
 * call against the exact schema, so nothing looser is ever accepted.
 */
export function portableSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(portableSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const node: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === 'propertyNames' || (key === 'additionalProperties' && isEmptySchema(value))) continue;
    // Under `properties` the keys are field names, not keywords: a field may be called `oneOf`.
    node[key === 'oneOf' ? 'anyOf' : key] = key === 'properties' ? portableProperties(value) : portableSchema(value);
  }

  if (Array.isArray(node.type)) {
    const types = node.type as string[];
    delete node.type;
    const branches = types.map((type) => ({ type }));
    node.anyOf = Array.isArray(node.anyOf) ? [...(node.anyOf as unknown[]), ...branches] : branches;
  }

  if (Array.isArray(node.prefixItems)) {
    // A tuple becomes a list of its element schemas with the tuple's length; the description keeps the order.
    const elements = node.prefixItems as unknown[];
    delete node.prefixItems;
    node.items = elements.length === 1 ? elements[0] : { anyOf: elements };
    node.minItems ??= elements.length;
    node.maxItems ??= elements.length;
  } else if (typeof node.items === 'boolean') {
    if (node.items) delete node.items;
    else node.maxItems = 0;
  }
  if (node.type === 'array' && node.items === undefined && node.maxItems !== 0) node.items = {};
  return node;
}

/** An absent `additionalProperties` allows any value, exactly as the empty schema does. */
function isEmptySchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function portableProperties(properties: unknown): unknown {
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return portableSchema(properties);
  return Object.fromEntries(Object.entries(properties).map(([field, schema]) => [field, portableSchema(schema)]));
}

/** Where a schema is not portable, as `path: reason`; empty when every client accepts it. */
export function portabilityProblems(schema: unknown, path = ''): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => portabilityProblems(item, `${path}[${index}]`));
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof node.items === 'boolean') problems.push(`${path}: items is a boolean`);
  if ('prefixItems' in node) problems.push(`${path}: prefixItems (a tuple)`);
  if (Array.isArray(node.type)) problems.push(`${path}: type is an array`);
  if (node.type === 'array' && !('items' in node)) problems.push(`${path}: array without items`);
  if (isEmptySchema(node.additionalProperties)) problems.push(`${path}: additionalProperties is the empty schema`);
  for (const keyword of ['oneOf', 'propertyNames', '$ref', '$defs', 'definitions']) if (keyword in node) problems.push(`${path}: ${keyword}`);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && typeof value === 'object' && value !== null && !Array.isArray(value))
      for (const [field, schema] of Object.entries(value)) problems.push(...portabilityProblems(schema, `${path}.properties.${field}`));
    else problems.push(...portabilityProblems(value, `${path}.${key}`));
  }
  return problems;
}
