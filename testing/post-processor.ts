/**
 * The behaviour every `PostProcessor` must have, as one suite each implementation runs:
 *
 * ```ts
 * describePostProcessorConformance('top-n', () => new TopN({ n: 3 }));
 * ```
 *
 * `create` is called in each test (after the caller's `beforeAll` hooks, so it may read a loopback server's URL).
 * The documents carry scores, contents and unit embeddings, so processors that need embeddings (MMR) run too.
 */
import { describe, expect } from 'vitest';
import type { PostProcessor } from '../src/contracts/post-processor.ts';
import type { RunContext } from '../src/contracts/run-context.ts';
import type { Document } from '../src/document.ts';
import { conformanceCases, type ConformanceSkip } from './skip.ts';

export interface PostProcessorConformanceOptions {
  /** Cases (the `it` titles) this post-processor cannot run, each group with its reason. */
  skip?: ConformanceSkip[];
}

/** The question every case asks. */
export const POST_PROCESSOR_QUESTION = 'How do I reset my password?';

const CONTENTS = [
  'To reset your password, open Settings, choose Security and click Reset password.',
  'If the reset email does not arrive, check the spam folder.',
  'Passwords must have at least twelve characters.',
  'Invoices are sent on the first day of each month.',
  'Our office is closed on public holidays.',
  'Two-factor authentication protects your account with a code from your phone.',
];

/** Six distinct documents, best first, with scores 0.9 … 0.4 and unit embeddings of 8 dimensions. */
export function postProcessorDocuments(): Document[] {
  return CONTENTS.map((content, index) => {
    const embedding = Array.from({ length: 8 }, (_, dimension) => (dimension === index ? 1 : dimension === (index + 1) % 8 ? 0.5 : 0.1));
    const norm = Math.hypot(...embedding);
    return {
      id: `doc-${index}`,
      content,
      sourceType: 'file',
      sourceName: `help/${index}.md`,
      score: Math.round((0.9 - index * 0.1) * 100) / 100,
      metadata: { chunkIndex: index },
      embedding: embedding.map((value) => value / norm),
    };
  });
}

/** A RunContext that records drops and warnings; `signal` can be given (an aborted one, say). */
export function conformanceRunContext(signal: AbortSignal = new AbortController().signal): RunContext & { dropped: Map<string, string>; warnings: string[] } {
  const dropped = new Map<string, string>();
  const warnings: string[] = [];
  return {
    runId: 'conformance-run',
    question: POST_PROCESSOR_QUESTION,
    signal,
    dropped,
    warnings,
    warn: (message) => void warnings.push(message),
    drop: (id, reason) => void dropped.set(id, reason),
  };
}

export function describePostProcessorConformance(
  name: string,
  create: () => PostProcessor | Promise<PostProcessor>,
  options: PostProcessorConformanceOptions = {},
): void {
  const { test, assertAllKnown } = conformanceCases(options.skip);
  const run = async (documents: Document[], context = conformanceRunContext()) => {
    const processor = await create();
    const output = await processor.process(POST_PROCESSOR_QUESTION, documents, context);
    return { processor, output, context };
  };

  describe(`${name}: PostProcessor conformance`, () => {
    test('has a kebab-case name', async () => {
      expect((await create()).name).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
    });

    test('does not mutate the input array or its documents', async () => {
      const input = postProcessorDocuments();
      const snapshot = structuredClone(input);
      const elements = [...input];
      await run(input);
      expect(input).toEqual(snapshot);
      expect(input.every((document, index) => document === elements[index])).toBe(true);
    });

    test('returns input documents only, once each, with finite scores', async () => {
      const input = postProcessorDocuments();
      const byId = new Map(input.map((document) => [document.id, document]));
      const { output } = await run(input);
      expect(Array.isArray(output)).toBe(true);
      expect(new Set(output.map((document) => document.id)).size).toBe(output.length);
      for (const document of output) {
        expect(byId.has(document.id)).toBe(true);
        expect(document.content).toBe(byId.get(document.id)!.content);
        expect(typeof document.score === 'number' && Number.isFinite(document.score)).toBe(true);
      }
    });

    test('records every dropped id through the stage context, with a reason', async () => {
      const input = postProcessorDocuments();
      const { output, context } = await run(input);
      const kept = new Set(output.map((document) => document.id));
      const dropped = input.filter((document) => !kept.has(document.id)).map((document) => document.id);
      expect([...context.dropped.keys()].sort()).toEqual(dropped.sort());
      for (const reason of context.dropped.values()) expect(reason.trim()).not.toBe('');
    });

    test('rejects with ABORTED when the run is already cancelled', async () => {
      const controller = new AbortController();
      controller.abort(new Error('the user left'));
      const processor = await create();
      await expect(processor.process(POST_PROCESSOR_QUESTION, postProcessorDocuments(), conformanceRunContext(controller.signal))).rejects.toMatchObject({
        code: 'ABORTED',
      });
    });

    test('answers an empty input with an empty array and no drops', async () => {
      const { output, context } = await run([]);
      expect(output).toEqual([]);
      expect(context.dropped.size).toBe(0);
    });

    assertAllKnown(`${name}: PostProcessor conformance`);
  });
}
