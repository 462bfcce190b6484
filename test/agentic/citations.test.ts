import { describe, expect, it } from 'vitest';
import { MarkerStripper, parseCitedAnswer, validateCitations } from '../../src/agentic/citations.ts';

describe('parseCitedAnswer', () => {
  it('turns markers into spans over the cited sentences and removes them from the text', () => {
    const raw = "Arthur's Magazine was started in 1844 [1]. First for Women was started in 1989 [2][3]. So Arthur's came first [1, 2].";
    const { text, citations, dropped } = parseCitedAnswer(raw, 3);
    expect(text).toBe("Arthur's Magazine was started in 1844. First for Women was started in 1989. So Arthur's came first.");
    expect(dropped).toEqual([]);
    expect(citations.map((citation) => text.slice(citation.startIndex, citation.endIndex))).toEqual([
      "Arthur's Magazine was started in 1844.",
      'First for Women was started in 1989.',
      "So Arthur's came first.",
    ]);
    expect(citations.map((citation) => citation.references)).toEqual([
      [{ resultIndex: 0 }],
      [{ resultIndex: 1 }, { resultIndex: 2 }],
      [{ resultIndex: 0 }, { resultIndex: 1 }],
    ]);
  });

  it('cites the part of a sentence after an earlier citation, and markers placed after the full stop', () => {
    const { text, citations } = parseCitedAnswer('Temple starred in the film [1] and later became Chief of Protocol [2]. She died in 2014. [2]', 2);
    expect(text).toBe('Temple starred in the film and later became Chief of Protocol. She died in 2014.');
    expect(citations.map((citation) => text.slice(citation.startIndex, citation.endIndex))).toEqual([
      'Temple starred in the film',
      'and later became Chief of Protocol.',
      'She died in 2014.',
    ]);
  });

  it('skips list bullets at the start of a cited line', () => {
    const { text, citations } = parseCitedAnswer('The passages say:\n- The first fact holds [1]\n- The second fact holds [2]', 2);
    expect(citations.map((citation) => text.slice(citation.startIndex, citation.endIndex))).toEqual(['The first fact holds', 'The second fact holds']);
  });

  it('drops references to results that do not exist and markers that cite nothing, and says why', () => {
    const { text, citations, dropped } = parseCitedAnswer('A claim [1]. [2] Another claim [7]. Last [2, 9].', 2);
    expect(text).toBe('A claim. Another claim. Last.');
    expect(citations).toEqual([
      { startIndex: 0, endIndex: 8, references: [{ resultIndex: 0 }] },
      { startIndex: 24, endIndex: 29, references: [{ resultIndex: 1 }] },
    ]);
    expect(text.slice(24, 29)).toBe('Last.');
    expect(dropped.map((entry) => entry.reason)).toEqual([
      'the marker cites no text (nothing between it and the previous citation or sentence boundary)',
      'marker [7] names no result (there are 2)',
      'marker [9] names no result (there are 2)',
    ]);
  });

  it('leaves bracketed text that is not a marker alone', () => {
    const { text, citations } = parseCitedAnswer('See [the guide] and item [a] [1].', 1);
    expect(text).toBe('See [the guide] and item [a].');
    expect(citations).toHaveLength(1);
  });
});

describe('validateCitations', () => {
  it('keeps valid spans and drops out-of-range, empty, overlapping and dangling ones with a reason', () => {
    const answer = 'One. Two. Three.';
    const { citations, dropped } = validateCitations(
      [
        { startIndex: 5, endIndex: 9, references: [{ resultIndex: 1 }] },
        { startIndex: 0, endIndex: 4, references: [{ resultIndex: 0 }] },
        { startIndex: 7, endIndex: 12, references: [{ resultIndex: 0 }] },
        { startIndex: 10, endIndex: 40, references: [{ resultIndex: 0 }] },
        { startIndex: 10, endIndex: 10, references: [{ resultIndex: 0 }] },
        { startIndex: 10, endIndex: 16, references: [{ resultIndex: 5 }] },
        { startIndex: 10, endIndex: 16, references: [] },
        { startIndex: 1.5, endIndex: 3, references: [{ resultIndex: 0 }] },
      ],
      answer,
      2,
    );
    expect(citations).toEqual([
      { startIndex: 0, endIndex: 4, references: [{ resultIndex: 0 }] },
      { startIndex: 5, endIndex: 9, references: [{ resultIndex: 1 }] },
    ]);
    expect(dropped.map((entry) => entry.reason)).toEqual([
      'offsets are not integers',
      'span [7, 12) overlaps the previous citation, which ends at 9',
      'span [10, 10) is empty',
      'a reference names no result (there are 2)',
      'the span references no result',
      'span [10, 40) is outside the answer (length 16)',
    ]);
  });
});

describe('MarkerStripper', () => {
  it('streams pieces that concatenate to the parsed text, whatever the chunking', () => {
    const raw = "Arthur's Magazine began in 1844 [1]. First for Women began in 1989 [2, 3][4]. A [b] c [12].";
    const expected = parseCitedAnswer(raw, 12).text;
    for (const size of [1, 2, 3, 5, 8, 13, 100]) {
      const stripper = new MarkerStripper();
      const pieces: string[] = [];
      for (let start = 0; start < raw.length; start += size) pieces.push(stripper.push(raw.slice(start, start + size)));
      pieces.push(stripper.finish());
      expect(pieces.join(''), `chunks of ${size}`).toBe(expected);
      // Nothing that is part of a marker is ever released.
      expect(
        pieces.some((piece) => /\[\d/.test(piece)),
        `chunks of ${size}`,
      ).toBe(false);
    }
  });
});
