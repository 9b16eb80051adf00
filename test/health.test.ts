import { describe, expect, it } from 'vitest';
import packageJson from '../package.json';
import { call, json } from './support/api';

describe('GET /health', () => {
  it('answers without a credential with the version and the build served', async () => {
    const response = await call('/health');
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ success: true, data: { status: 'ok', version: packageJson.version, build: 'test-build' } });
  });
});
