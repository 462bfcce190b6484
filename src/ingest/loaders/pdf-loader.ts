import type { PDFDocumentProxy } from 'unpdf/pdfjs';
import type { JsonValue } from '../../document.ts';
import { AxonError } from '../../errors.ts';
import { formatBytes } from '../source-file.ts';
import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';
import { measurePdfStreams } from './pdf-stream-size.ts';

/**
 * PDF: one document per page, each with `metadata.pageNumber` (1-based) so citations can name the page, and
 * `title` from the document information when present. Pages without text are left out; a PDF with no text
 * at all (a scan) yields nothing and is reported as such, since OCR is out of scope.
 *
 * Built on `unpdf`: Mozilla's PDF.js (the most widely used PDF text extractor, kept up by Mozilla) packaged
 * for server runtimes without a DOM, canvas or worker setup, with no native dependency and an ESM build.
 */
export class PdfLoader implements Loader {
  readonly name = 'pdf-loader';
  readonly binary = true;

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    const original = await source.bytes();
    await checkExtractedSize(original, source);
    // PDF.js takes ownership of (detaches) the buffer it is given, so pass a copy.
    const bytes = new Uint8Array(original);
    // Loaded on first use: PDF.js is large, and most runs that never see a PDF should not pay for it.
    const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
    let document: PDFDocumentProxy;
    try {
      // Verbosity 0 keeps PDF.js from printing recovery warnings ("Indexing all PDF objects") to the console.
      document = await getDocumentProxy(bytes, { verbosity: 0 });
    } catch (error) {
      throw new AxonError('INGEST_FAILED', `${source.sourceName} is not a readable PDF (${(error as Error).message}).`, {
        component: this.name,
        fix: 'Check that the file is a complete, unencrypted PDF.',
        cause: error,
      });
    }
    try {
      const title = await readTitle(() => getMeta(document));
      const { text } = await extractText(document, { mergePages: false });
      for (let index = 0; index < text.length; index++) {
        const content = normalizePageText(text[index]);
        if (content === '') continue;
        const metadata: Record<string, JsonValue> = { pageNumber: index + 1, pageCount: text.length };
        if (title) metadata.title = title;
        yield { content, metadata };
      }
    } finally {
      await document.destroy();
    }
  }
}

/** The most bytes a PDF's streams may decode to when the source sets no limit: 128 MiB. */
export const DEFAULT_MAX_EXTRACTED_BYTES = 128 * 1024 * 1024;

// --- Internal helpers ---

/**
 * Refuse a PDF whose streams decode to more than the source's `maxExtractedBytes` before PDF.js inflates any of
 * them: PDF.js holds a page's whole content stream, so a half-megabyte file inflating to 512 MiB held over 1 GB.
 */
async function checkExtractedSize(bytes: Uint8Array, source: LoaderSource): Promise<void> {
  const limit = source.maxExtractedBytes ?? DEFAULT_MAX_EXTRACTED_BYTES;
  const measured = await measurePdfStreams(bytes, limit, source.signal);
  if (measured.encryption === 'unreadable' && !measured.overLimit) {
    source.warn(
      'is encrypted in a way its streams cannot be decrypted before reading, so how far they inflate was not checked (maxExtractedBytes does not bound it).',
    );
  }
  if (!measured.overLimit) return;
  throw new AxonError(
    'CAPACITY_EXCEEDED',
    `${source.sourceName} (${formatBytes(bytes.length)}) holds streams that inflate to more than ${formatBytes(limit)}, the maxExtractedBytes limit; it was not read.`,
    {
      component: 'pdf-loader',
      fix: 'If the file is trusted and really that large, raise maxExtractedBytes; otherwise leave it out (a file that inflates a thousandfold is usually built to exhaust memory).',
      details: { option: 'maxExtractedBytes', limit, file: source.sourceName },
    },
  );
}

async function readTitle(readMeta: () => Promise<{ info: Record<string, unknown> }>): Promise<string | undefined> {
  try {
    const { info } = await readMeta();
    const title = typeof info?.Title === 'string' ? info.Title.trim() : '';
    return title === '' ? undefined : title;
  } catch {
    return undefined;
  }
}

/** PDF text comes with ragged spacing; collapse it, keep line breaks, and rejoin words hyphenated across lines. */
function normalizePageText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/(\p{L})-\n(\p{Ll})/gu, '$1$2')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
