import { describe, expect, it } from 'vitest';
import { comparisonKey, parsePassage, parseQueryLines } from '../../../processors/pre/parse-query-lines.ts';

const lines = (output: string, maxQueries = 10) => parseQueryLines(output, { maxQueries }).queries;

describe('parseQueryLines', () => {
  it('strips every common numbering and bullet style', () => {
    const output = [
      '1. alpha one',
      '2) beta two',
      '(3) gamma three',
      '[4] delta four',
      '- epsilon five',
      '* zeta six',
      '• eta seven',
      'Q8: theta eight',
      'a) iota nine',
    ].join('\n');
    expect(lines(output)).toEqual(['alpha one', 'beta two', 'gamma three', 'delta four', 'epsilon five', 'zeta six', 'eta seven', 'theta eight', 'iota nine']);
  });

  it('drops a preamble and a trailing explanation around a numbered list', () => {
    const output =
      "Here are the sub-questions:\n\n1. When was Arthur's Magazine founded?\n2. When was First for Women founded?\n\nThese two sub-questions together answer the comparison.";
    expect(lines(output)).toEqual(["When was Arthur's Magazine founded?", 'When was First for Women founded?']);
  });

  it('drops a preamble and a trailing explanation around unnumbered lines', () => {
    const output =
      "Sure! I split the question.\nWhen was Arthur's Magazine founded?\nWhen was First for Women founded?\n\nNote: each sub-question targets one magazine.\nIt helps retrieval.";
    expect(lines(output)).toEqual(["When was Arthur's Magazine founded?", 'When was First for Women founded?']);
  });

  it('removes quotes, bold, labels and code fences', () => {
    const output = '```text\n**1.** "How do I reset my password?"\n2. Query: “password reset email not received”\n3. `reset link expired`.\n```';
    expect(lines(output)).toEqual(['How do I reset my password?', 'password reset email not received', 'reset link expired']);
  });

  it('removes duplicates ignoring case, spacing and end punctuation, and counts them', () => {
    const parsed = parseQueryLines('What is HNSW?\nwhat   is hnsw\nWhat is HNSW ?\nHow does HNSW scale?', { maxQueries: 5 });
    expect(parsed).toEqual({ queries: ['What is HNSW?', 'How does HNSW scale?'], overLimit: 0, duplicates: 2 });
  });

  it('caps an over-long list and reports how many distinct queries were cut', () => {
    const output = Array.from({ length: 9 }, (_, index) => `${index + 1}. query number ${index + 1}`).join('\n');
    const parsed = parseQueryLines(output, { maxQueries: 4 });
    expect(parsed.queries).toEqual(['query number 1', 'query number 2', 'query number 3', 'query number 4']);
    expect(parsed.overLimit).toBe(5);
  });

  it('accepts a JSON array, or an object holding one', () => {
    expect(lines('["first query", "second query", 3]')).toEqual(['first query', 'second query']);
    expect(lines('```json\n{"queries": ["first query", "second query"]}\n```')).toEqual(['first query', 'second query']);
  });

  it('keeps numbers that are part of a query, not a marker', () => {
    expect(lines('2023 revenue of ACME\n3.5 million users of INC-2023-Q4-011')).toEqual(['2023 revenue of ACME', '3.5 million users of INC-2023-Q4-011']);
  });

  it('returns nothing for empty, punctuation-only, preamble-only or refusal output', () => {
    expect(lines('')).toEqual([]);
    expect(lines('  \n\n ')).toEqual([]);
    expect(lines('---\n...\n""')).toEqual([]);
    expect(lines('Here are the sub-questions:')).toEqual([]);
    expect(lines("I'm sorry, but I can't help with that.")).toEqual([]);
  });
});

describe('parsePassage', () => {
  it('keeps the passage and drops the preamble, label, quotes and closing note', () => {
    const output =
      'Sure! Here is a hypothetical passage:\n\n"Passage: To reset a password, open Settings and choose Security.\nA reset link is emailed within five minutes."\n\nNote: this passage is hypothetical.';
    expect(parsePassage(output)).toBe('To reset a password, open Settings and choose Security.\nA reset link is emailed within five minutes.');
  });

  it('keeps a passage that opens like a list introduction', () => {
    expect(parsePassage('The following steps reset a password. Open Settings, then Security.')).toBe(
      'The following steps reset a password. Open Settings, then Security.',
    );
  });

  it('returns an empty string for empty output or a refusal', () => {
    expect(parsePassage('```\n\n```')).toBe('');
    expect(parsePassage('I cannot write that passage.')).toBe('');
  });
});

describe('comparisonKey', () => {
  it('folds case, spacing, width and end punctuation', () => {
    expect(comparisonKey('  What IS  ＨＮＳＷ?! ')).toBe('what is hnsw');
  });
});
