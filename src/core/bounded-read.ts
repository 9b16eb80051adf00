/**
 * Reads a stream to its end, counting bytes as they arrive: past `maxBytes` the rest is cancelled and
 * the answer is undefined, whatever a header claimed. Errors of the stream itself propagate.
 */
export async function readAtMost(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return concatenate(chunks, total);
}

/** Reads a stream to its end: one that caps itself (a SafeFetcher body) or is known to be small. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return (await readAtMost(stream, Number.POSITIVE_INFINITY))!;
}

/** One new buffer holding exactly the chunks (callers may hand its .buffer on, so never a view of a chunk). */
function concatenate(chunks: Uint8Array[], total: number): Uint8Array {
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * The first `bytes` bytes of a stream (fewer if it is shorter), read without consuming it: `body` yields
 * the whole stream again, head first, and reads the rest only as it is asked for.
 */
export async function readHead(stream: ReadableStream<Uint8Array>, bytes: number): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let ended = false;
  while (length < bytes) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    chunks.push(value);
    length += value.byteLength;
  }
  const head = concatenate(chunks, length).subarray(0, bytes);
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const kept = chunks.shift();
        if (kept) return controller.enqueue(kept);
        const next = ended ? { done: true as const } : await reader.read();
        if (next.done) return controller.close();
        controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return { head, body };
}
