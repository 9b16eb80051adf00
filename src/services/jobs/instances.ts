/**
 * Lets go of a Workflow instance handle nothing here uses further: locally (Miniflare) it is an RPC result
 * that holds its connection until it is disposed or collected, which workerd warns of.
 */
export function release(instance: WorkflowInstance): void {
  (instance as Partial<Disposable>)[Symbol.dispose]?.();
}
