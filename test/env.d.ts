import type { D1Migration } from 'cloudflare:test';
import type { Env as WorkerEnv } from '../src/core/config';

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      SCRATCH_DB: D1Database;
    }
    interface GlobalProps {
      mainModule: typeof import('../src/api/index');
    }
  }
}
