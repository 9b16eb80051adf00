import { readAtMost } from './bounded-read';
import { ApiError } from './errors';

/**
 * The most either worker reads of a request body. No operation needs more: the longest inputs (keyword
 * lists, scrape options) are a few kilobytes. A bigger body is refused before it is read past the cap.
 */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/**
 * A declared body past the cap but within this is read on and thrown away before the 400 is sent: a
 * client still writing it would otherwise see its connection reset instead of the answer (the server
 * closes with unread bytes). A bigger one is not worth reading: its connection is dropped.
 */
const DRAINED_BYTES = 4 * MAX_REQUEST_BODY_BYTES;

async function discard(body: ReadableStream<Uint8Array>, drain: boolean): Promise<void> {
  if (drain) {
    const reader = body.getReader();
    let total = 0;
    while (total <= DRAINED_BYTES) {
      const chunk = await reader.read().catch(() => undefined);
      if (!chunk || chunk.done) return;
      total += chunk.value.byteLength;
    }
    await reader.cancel().catch(() => {});
    return;
  }
  await body.cancel().catch(() => {});
}

export function bodyTooLarge(maxBytes = MAX_REQUEST_BODY_BYTES): ApiError {
  const megabytes = maxBytes / (1024 * 1024);
  return ApiError.validation([
    { field: 'body', location: 'body', message: `The request body is larger than ${megabytes} MB (${maxBytes.toLocaleString('en-US')} bytes), the most this API reads.` },
  ]);
}

/**
 * The request's body, read through a counting reader that stops at the cap: a declared Content-Length over
 * it is refused unread, a stream that runs past it (chunked, or lying about its length) is cancelled there.
 * Undefined for a request without a body.
 */
export async function readRequestBody(request: Request, maxBytes = MAX_REQUEST_BODY_BYTES): Promise<Uint8Array | undefined> {
  if (!request.body) return undefined;
  const declared = Number(request.headers.get('content-length'));
  if (declared > maxBytes) {
    await discard(request.body, declared <= DRAINED_BYTES);
    throw bodyTooLarge(maxBytes);
  }
  const body = await readAtMost(request.body, maxBytes);
  if (!body) throw bodyTooLarge(maxBytes);
  return body;
}

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/;

/**
 * A body that could not be read as JSON, said as what to send: a JSON content-type with a broken body is
 * malformed JSON; any other content-type (a form post, `curl -d` without a header) is told the header to send.
 */
export function unreadableJsonBody(contentType: string | undefined): ApiError {
  const mediaType = mediaTypeOf(contentType);
  const message = JSON_MEDIA_TYPE.test(mediaType)
    ? 'Malformed JSON in request body.'
    : `The request body must be JSON: send it with \`content-type: application/json\` (this request said ${mediaType ? `\`${mediaType}\`` : 'no content-type'}).`;
  return ApiError.validation([{ field: 'body', location: 'body', message }]);
}

/** A Content-Type header's media type alone, lowercase: `Text/HTML; charset=utf-8` is `text/html`; absent is ``. */
export function mediaTypeOf(header: string | null | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}
