/**
 * Every request these end-to-end files make opens its own connection (undici's `pipelining: 0`), here in
 * the test process only. With keep-alive, Node's fetch hands a request to an idle pooled socket that
 * workerd may be closing at that moment: the request fails with "other side closed" (UND_ERR_SOCKET) before
 * any answer, and a POST cannot safely be sent again. Miniflare's own dispatchFetch closes each connection
 * for the same reason. A connection per request on loopback costs well under a millisecond.
 */
import { Agent, setGlobalDispatcher } from 'undici';

setGlobalDispatcher(new Agent({ pipelining: 0 }));
