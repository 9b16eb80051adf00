export const FAKE_DATAFORSEO = { login: 'fake-login', password: 'fake-password', baseUrl: 'https://dataforseo.fake' } as const;

/** A fake of DataForSEO v3. */
export async function dataforseoUpstream(request: Request): Promise<Response> {
  return Response.json({ status_code: 40400, status_message: `Not built: ${new URL(request.url).pathname}` }, { status: 404 });
}
