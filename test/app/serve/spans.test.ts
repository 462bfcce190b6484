import { describe, expect, it } from 'vitest';
import { citingTexts, quotedSpans, sharedSpans } from '../../../app/serve/spans.ts';

const CHUNK = 'To reset your password, open Settings, then Security, then choose Reset password.';
const texts = (chunk: string, spans: { start: number; end: number }[]) => spans.map((span) => chunk.slice(span.start, span.end));

describe('sharedSpans', () => {
  it('finds every run of three or more words the claim repeats, ignoring case and punctuation', () => {
    expect(texts(CHUNK, sharedSpans('Open Settings, then Security, and choose Reset password.', CHUNK))).toEqual([
      'open Settings, then Security',
      'choose Reset password',
    ]);
  });

  it('finds nothing in a paraphrase or a two-word overlap', () => {
    expect(sharedSpans('Go to the security page and ask for a new one.', CHUNK)).toEqual([]);
    expect(sharedSpans('Reset password now, please.', CHUNK)).toEqual([]);
  });

  it('marks every place the chunk repeats the words', () => {
    const chunk = 'choose Reset password here; later choose Reset password again';
    expect(texts(chunk, sharedSpans('then choose Reset password', chunk))).toEqual(['choose Reset password', 'choose Reset password']);
  });

  it('merges runs that overlap in the chunk', () => {
    // "open Settings, then" and "Settings, then Security" come from two places in the claim and overlap in the chunk.
    expect(texts(CHUNK, sharedSpans('First open Settings, then wait; Settings, then Security.', CHUNK))).toEqual(['open Settings, then Security']);
    expect(texts(CHUNK, quotedSpans(['open Settings, then', 'then Security, then choose'], CHUNK))).toEqual(['open Settings, then Security, then choose']);
  });
});

describe('citingTexts', () => {
  it('takes the sentence each marker closes, and shares it between adjacent markers', () => {
    const claims = citingTexts('Resets need Settings. Open Settings, then Security [1][2]. Invoices come monthly [3].');
    expect(claims.get(1)).toEqual(['Open Settings, then Security']);
    expect(claims.get(2)).toEqual(['Open Settings, then Security']);
    expect(claims.get(3)).toEqual(['Invoices come monthly']);
  });

  it('does not end a sentence at an abbreviation', () => {
    const claims = citingTexts('Refunds are slow. Dr. Smith said the refund takes five days [1].');
    expect(claims.get(1)).toEqual(['Dr. Smith said the refund takes five days']);
  });

  it('reads extractive answers, one quoted sentence per line with its marker after the full stop', () => {
    const answer =
      'Extractive answer (no chat model is configured): the passages below best match the question.\n- To reset your password, open Settings. [1]\n- Refunds take five days. [2]';
    expect(citingTexts(answer).get(1)).toEqual(['To reset your password, open Settings']);
    expect(citingTexts(answer).get(2)).toEqual(['Refunds take five days']);
    expect(texts(CHUNK, quotedSpans(citingTexts(answer).get(1)!, CHUNK))).toEqual(['To reset your password, open Settings']);
  });

  it('collects every sentence citing the same label, and a list of labels in one marker', () => {
    const claims = citingTexts('Open Settings first [1]. Then choose Reset password [1, 2].');
    expect(claims.get(1)).toEqual(['Open Settings first', 'Then choose Reset password']);
    expect(claims.get(2)).toEqual(['Then choose Reset password']);
  });
});
