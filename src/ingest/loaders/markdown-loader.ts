import type { JsonValue } from '../../document.ts';
import { AxonError } from '../../errors.ts';
import { toJsonObject } from '../json-value.ts';
import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';
import { lazyModule } from '../../runtime/lazy-module.ts';

/**
 * Markdown (`.md`, `.markdown`, `.mdx`). A YAML front matter block (`---` … `---` on the first lines) is
 * parsed into metadata and removed from the text; `title` comes from the front matter or else the first
 * level-1 heading. The text is split by the Markdown splitter, which keeps each chunk's heading path.
 */
export class MarkdownLoader implements Loader {
  readonly name = 'markdown-loader';

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    const text = (await source.text()).replace(/\r\n?/g, '\n');
    const { frontMatter, body } = await extractFrontMatter(text, source.sourceName);
    const metadata: Record<string, JsonValue> = { ...frontMatter };
    if (typeof metadata.title !== 'string') {
      const heading = /^ {0,3}# +(.+?)[ #]*$/m.exec(stripFencedCode(body));
      if (heading) metadata.title = heading[1].trim();
    }
    yield { content: body, metadata, markdown: true };
  }
}

/** Split a leading YAML front matter block from the Markdown body. Loads `yaml` only for a page that has one. */
export async function extractFrontMatter(text: string, sourceName = 'markdown'): Promise<{ frontMatter: Record<string, JsonValue>; body: string }> {
  const match = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(text);
  if (!match) return { frontMatter: {}, body: text };
  let parsed: unknown;
  const { parse: parseYaml } = await yamlParser.load();
  try {
    parsed = parseYaml(match[1]);
  } catch (error) {
    throw new AxonError('INGEST_FAILED', `The front matter of ${sourceName} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, {
      component: 'markdown-loader',
      fix: 'Fix the YAML between the leading --- lines, or remove it.',
      cause: error,
    });
  }
  const frontMatter = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? toJsonObject(parsed as Record<string, unknown>) : {};
  return { frontMatter, body: text.slice(match[0].length) };
}

// --- Internal helpers ---

const yamlParser = lazyModule('yaml', 'markdown-loader', () => import('yaml'));

function stripFencedCode(markdown: string): string {
  return markdown.replace(/^ {0,3}(`{3,}|~{3,})[\s\S]*?^ {0,3}\1[ \t]*$/gm, '');
}
