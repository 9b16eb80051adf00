import { describe, expect, it } from 'vitest';
import { ops } from './support/api';
import { signUp } from './support/dashboard';

const UNSHOWABLE = [
  ['NUL', 'Billing\u0000'],
  ['a line break', 'Billing\nAdmin'],
  ['DEL', 'Billing\u007F'],
  ['a right-to-left mark', 'Billing\u200F'],
  ['a right-to-left override', 'invoice\u202Efdp.exe'],
  ['a first-strong isolate', 'Billing\u2068x\u2069'],
];

describe('names people read refuse controls and text-direction overrides', () => {
  it.each(UNSHOWABLE)('refuses a workspace name with %s with 400 VALIDATION_ERROR', async (_, name) => {
    const owner = await signUp();
    const response = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(response.body.error.details)).toContain('not allowed in a name');
  });

  it.each(UNSHOWABLE)('refuses a key name with %s with 400 VALIDATION_ERROR', async (_, name) => {
    const owner = await signUp();
    const response = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(response.body.error.details)).toContain('not allowed in a name');
  });

  it('refuses them in the operator API too', async () => {
    const owner = await signUp();
    const response = await ops('POST', '/workspaces', { organizationId: owner.organizationId, name: 'Ops\u202Eevil' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('keeps any other script, accents, emoji (with their zero-width joiners) and Arabic', async () => {
    const owner = await signUp();
    for (const name of ['Équipe 東京', 'Dev 👩‍💻 team', 'فريق المبيعات']) {
      const response = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name });
      expect(response.status).toBe(201);
      expect(response.body.data.name).toBe(name);
    }
  });
});
