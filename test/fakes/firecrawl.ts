export const FAKE_FIRECRAWL = { key: 'fc-fake-key', baseUrl: 'https://firecrawl.fake' } as const;

/** A fake of Firecrawl v2. */
export async function firecrawlUpstream(request: Request): Promise<Response> {
  return Response.json({ success: false, error: `Not built: ${new URL(request.url).pathname}` }, { status: 404 });
}
