import type { DroppedCitation, SpanCitation } from './types.ts';

/** One run of inline markers (`[1]`, `[1, 3]`, `[2][4]`) with the whitespace before it, which goes with it. */
const MARKER_GROUP = /\s*((?:\[\d+(?:\s*,\s*\d+)*\])+)/g;
/** A marker group that may still be growing at the end of a streamed text. */
const PARTIAL_MARKER_AT_END = /\s*(?:\[\d+(?:\s*,\s*\d+)*\])*\[[\d\s,]*$|\s+$/;
/** Where a sentence ends: terminal punctuation (and closing quotes or brackets) before whitespace, or a line break. */
const SENTENCE_BOUNDARY = /[.!?]["'\u2019\u201D)\]]*\s+|\n+/g;
/** What a cited span never starts with: whitespace, list bullets, numbered-list labels. */
const LEADING_NOISE = /^(?:\s+|[-*\u2022]\s+|\d+[.)]\s+)+/;
/** Punctuation that closes the cited sentence right after a marker: `… in 1844 [1].` cites `… in 1844.` */
const CLOSING_PUNCTUATION = /^[.!?;:,]+["'\u2019\u201D)]*/;

export interface ParsedAnswer {
  /** The answer without markers (and without the whitespace before each marker group). */
  text: string;
  /** Valid, non-overlapping spans in order. */
  citations: SpanCitation[];
  /** Markers that could not become a valid citation, with the reason. */
  dropped: DroppedCitation[];
}

/**
 * Turn a model's answer with inline markers into clean text and character-span citations. Each marker group
 * cites the sentence it closes: from the last sentence boundary (or the end of the previous cited span, when
 * that is later) to the marker, extended over punctuation that follows the marker. Marker numbers are 1-based
 * labels; a label `n` references `resultIndex` n − 1. References to results that do not exist, empty spans and
 * overlapping spans are dropped and reported.
 */
export function parseCitedAnswer(raw: string, resultCount: number): ParsedAnswer {
  let text = '';
  const spans: SpanCitation[] = [];
  const dropped: DroppedCitation[] = [];
  let previousEnd = 0;
  let cursor = 0;
  for (const match of raw.matchAll(MARKER_GROUP)) {
    text += raw.slice(cursor, match.index);
    cursor = match.index + match[0].length;
    const labels = [...match[1].matchAll(/\d+/g)].map((label) => Number(label[0]));
    // The sentence's own punctuation after the marker belongs to the cited span, so move it over now.
    const punctuation = CLOSING_PUNCTUATION.exec(raw.slice(cursor))?.[0] ?? '';
    const contentEnd = text.length;
    text += punctuation;
    cursor += punctuation.length;
    const startIndex = sentenceStart(text, contentEnd, previousEnd);
    const endIndex = text.length;
    const references: { resultIndex: number }[] = [];
    for (const label of new Set(labels)) {
      if (label >= 1 && label <= resultCount) references.push({ resultIndex: label - 1 });
      else {
        const reason = `marker [${label}] names no result (there ${countText(resultCount)})`;
        dropped.push({ startIndex, endIndex, references: [{ resultIndex: label - 1 }], reason });
      }
    }
    if (references.length === 0) continue;
    if (startIndex >= contentEnd) {
      const reason = 'the marker cites no text (nothing between it and the previous citation or sentence boundary)';
      dropped.push({ startIndex, endIndex, references, reason });
      continue;
    }
    spans.push({ startIndex, endIndex, references });
    previousEnd = endIndex;
  }
  text += raw.slice(cursor);
  const checked = validateCitations(spans, text, resultCount);
  return { text, citations: checked.citations, dropped: [...dropped, ...checked.dropped] };
}

/**
 * Keep the citations that hold for this answer and result count: integer offsets with
 * `0 ≤ startIndex < endIndex ≤ answer.length`, at least one reference, every reference an existing result,
 * and no overlap with an earlier kept span (spans are taken in start order). Returns the kept spans in order
 * and the dropped ones with the reason.
 */
export function validateCitations(
  citations: readonly SpanCitation[],
  answer: string,
  resultCount: number,
): { citations: SpanCitation[]; dropped: DroppedCitation[] } {
  const kept: SpanCitation[] = [];
  const dropped: DroppedCitation[] = [];
  const ordered = [...citations].sort((left, right) => left.startIndex - right.startIndex || left.endIndex - right.endIndex);
  let lastEnd = 0;
  for (const citation of ordered) {
    const { startIndex, endIndex } = citation;
    const references = Array.isArray(citation.references) ? citation.references : [];
    const drop = (reason: string) => dropped.push({ startIndex, endIndex, references, reason });
    if (!Number.isInteger(startIndex) || !Number.isInteger(endIndex)) drop('offsets are not integers');
    else if (startIndex < 0 || endIndex > answer.length) drop(`span [${startIndex}, ${endIndex}) is outside the answer (length ${answer.length})`);
    else if (startIndex >= endIndex) drop(`span [${startIndex}, ${endIndex}) is empty`);
    else if (references.length === 0) drop('the span references no result');
    else if (references.some((reference) => !Number.isInteger(reference?.resultIndex) || reference.resultIndex < 0 || reference.resultIndex >= resultCount)) {
      drop(`a reference names no result (there ${countText(resultCount)})`);
    } else if (startIndex < lastEnd) drop(`span [${startIndex}, ${endIndex}) overlaps the previous citation, which ends at ${lastEnd}`);
    else {
      kept.push({ startIndex, endIndex, references: references.map((reference) => ({ resultIndex: reference.resultIndex })) });
      lastEnd = endIndex;
    }
  }
  return { citations: kept, dropped };
}

/**
 * Strips markers from a streamed answer as it arrives, so every piece it returns is final: the pieces
 * concatenate to `parseCitedAnswer(whole).text`. Text that could still turn out to be (or precede) a marker
 * is held back until the next delta or `finish()`.
 */
export class MarkerStripper {
  private raw = '';
  private emitted = 0;

  /** Add a delta; returns the text that is now settled (possibly empty). */
  push(delta: string): string {
    this.raw += delta;
    const pending = PARTIAL_MARKER_AT_END.exec(this.raw);
    const settled = pending === null ? this.raw : this.raw.slice(0, pending.index);
    return this.take(stripMarkers(settled));
  }

  /** The rest of the text, once the stream has ended. */
  finish(): string {
    return this.take(stripMarkers(this.raw));
  }

  /** Everything pushed so far. */
  get text(): string {
    return this.raw;
  }

  private take(clean: string): string {
    // A settled prefix only ever grows, so the new text is what lies past the part already emitted.
    const piece = clean.slice(this.emitted);
    this.emitted = Math.max(this.emitted, clean.length);
    return piece;
  }
}

// --- Internal helpers ---

function countText(count: number): string {
  return count === 1 ? 'is 1' : `are ${count}`;
}

function stripMarkers(raw: string): string {
  return raw.replace(MARKER_GROUP, '');
}

function sentenceStart(text: string, contentEnd: number, previousEnd: number): number {
  let start = 0;
  SENTENCE_BOUNDARY.lastIndex = 0;
  for (const boundary of text.slice(0, contentEnd).matchAll(SENTENCE_BOUNDARY)) {
    const after = boundary.index + boundary[0].length;
    if (after < contentEnd) start = after;
  }
  start = Math.max(start, previousEnd);
  const noise = LEADING_NOISE.exec(text.slice(start, contentEnd));
  return noise ? start + noise[0].length : start;
}
