import { createServer, type Server } from 'node:http';
import company from '../fixtures/linkedin-company.json' with { type: 'json' };

/** A loopback stand-in for the professional-network vendor: the recorded company answer, as fast as Node serves it. */
export async function startFakeLinkedin(): Promise<{ url: string; server: Server }> {
  const body = JSON.stringify(company);
  const server = createServer((request, response) => {
    if (!request.url?.startsWith('/get-company-by-domain')) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('fake upstream did not bind');
  return { url: `http://127.0.0.1:${address.port}`, server };
}
