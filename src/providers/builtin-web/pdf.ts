import { normalizeUpstream } from '../normalize';

export interface PdfText {
  /** The text of each page read, pages separated by a blank line. */
  markdown: string;
  title?: string;
  pagesRead: number;
  totalPages: number;
}

/**
 * The text layer of a PDF, through pdf.js's serverless build (unpdf). Loaded on first use, so a worker
 * that never meets a PDF never pays for starting pdf.js. Scanned pages have no text layer; there is no OCR.
 * At most `maxPages` pages are read.
 */
export async function readPdf(bytes: Uint8Array, maxPages: number): Promise<PdfText> {
  const { getDocumentProxy, getMeta } = await import('unpdf');
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given.
    document = await getDocumentProxy(new Uint8Array(bytes));
  } catch (error) {
    throw normalizeUpstream.rejected('The built-in web provider', `the PDF could not be read (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    const pagesRead = Math.min(document.numPages, maxPages);
    const pages: string[] = [];
    for (let number = 1; number <= pagesRead; number++) {
      const content = await (await document.getPage(number)).getTextContent();
      const text = content.items.map((item) => ('str' in item ? `${item.str}${item.hasEOL ? '\n' : ''}` : '')).join('');
      pages.push(text.replace(/[ \t]+\n/g, '\n').trim());
    }
    const info = (await getMeta(document).catch(() => undefined))?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === 'string' && info.Title.trim() ? info.Title.trim() : undefined;
    return { markdown: pages.filter(Boolean).join('\n\n'), ...(title ? { title } : {}), pagesRead, totalPages: document.numPages };
  } finally {
    await document.destroy();
  }
}
