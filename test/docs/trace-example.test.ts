import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateTraceExample, traceShape } from '../../scripts/docs-trace-example.ts';

describe('docs/getting-started.md trace example', () => {
  it('shows the stages a fresh `axon ask --trace` prints (regenerate: npx tsx scripts/docs-trace-example.ts)', async () => {
    const page = readFileSync(new URL('../../docs/getting-started.md', import.meta.url), 'utf8');
    const block = /<!-- trace-example[^>]*-->\n```\n([\s\S]*?)```/.exec(page)?.[1];
    expect(block, 'the trace-example block').toBeDefined();
    const fresh = await generateTraceExample();
    expect(traceShape(block!)).toEqual(traceShape(fresh));
    expect(traceShape(fresh).length).toBeGreaterThan(4);
  });
});
