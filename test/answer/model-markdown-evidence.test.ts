import { describe, expect, it } from 'vitest';
import { extractiveAnswer } from '../../src/answer/extractive.ts';
import { judgeModelAnswer } from '../../src/answer/model-answer.ts';
import type { Evidence } from '../../src/context/evidence.ts';

// A model's answer and the extractive answer weigh the question's terms over the same sentences of the evidence:
// Markdown code, headings and table rows are not sentences for either.

function evidenceItem(label: number, id: string, content: string): Evidence {
  return { label, document: { id, content, sourceType: 'file', sourceName: `${id}.md`, metadata: {}, score: 1 } };
}

const commands = Array.from({ length: 8 }, (_, index) => `# Open the gateway. Check the fallback ${index}. Then the gateway fallback timeout again.`);
const evidence = [
  evidenceItem(1, 'relay', 'The relay uses port 7400.'),
  evidenceItem(2, 'operations', ['## Operations', '', 'Restarting is safe at any time.', '', '```sh', ...commands, '```', ''].join('\n')),
];
const question = 'Which port does the relay use for the gateway fallback timeout?';

describe('judgeModelAnswer over Markdown evidence', () => {
  it('does not count the sentences of a code block: an answer that misses most of the question is not answered', () => {
    const judged = judgeModelAnswer(question, 'The relay uses port 7400 [1].', [1], evidence);
    // Read as prose, the code's comments made gateway, fallback and timeout look common (24 sentences), so the
    // cited document's port and relay outweighed them: 0.66 of the question, answered.
    expect(judged).toMatchObject({ status: 'missing_evidence', reason: 'insufficient_coverage' });
    expect(judged.coverage).toMatchObject({ covered: ['port', 'relay'], missing: ['gateway', 'fallback', 'timeout'], sufficient: false });
  });

  it('weighs the question as the extractive answer does over the same evidence', () => {
    const judged = judgeModelAnswer(question, 'The relay uses port 7400 [1].', [1], evidence);
    const extractive = extractiveAnswer(question, evidence);
    expect(extractive.coverage.covered).toEqual(['port', 'relay']);
    expect(judged.coverage?.share).toBe(extractive.coverage.share);
  });
});
