import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import company from '../fixtures/linkedin-company.json' with { type: 'json' };

/**
 * A loopback stand-in for the professional-network vendor: the recorded company answer, as fast as Node
 * serves it. It runs in its own process so the load generator's event loop cannot slow it down.
 */
export async function startFakeLinkedin(): Promise<{ url: string; stop: () => void }> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve(Number(message)));
    child.once('exit', (code) => reject(new Error(`fake upstream exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

function serve() {
  const body = JSON.stringify(company);
  const server = createServer((request, response) => {
    if (!request.url?.startsWith('/get-company-by-domain')) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.(typeof address === 'object' && address ? address.port : 0);
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv[2] === 'serve') serve();
