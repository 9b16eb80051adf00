/**
 * What a node of an OpenAPI document stands for: the node its local `$ref` points at (`#/…`, a JSON pointer into
 * `doc`), a node without one as it is, and undefined for a reference that leads nowhere in `doc`.
 */
export function followed(doc: any, node: any): any {
  const ref = node?.$ref;
  if (typeof ref !== 'string') return node;
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .reduce((at: any, name) => at?.[name.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}
