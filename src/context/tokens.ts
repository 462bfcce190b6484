/**
 * Counts the tokens of a text for budgeting. Plug in the model's real tokenizer where exact counts matter; the
 * default is an estimate. A tokenizer must be synchronous and deterministic.
 *
 * ```ts
 * // partial
 * import { encode } from 'gpt-tokenizer'; // pure JS, o200k BPE (OpenAI's current models)
 * const tokenizer: Tokenizer = { name: 'gpt-tokenizer/o200k', count: (text) => encode(text).length };
 * ```
 */
export interface Tokenizer {
  /** Recorded in every packet, so two runs counted differently can be told apart. */
  readonly name: string;
  count(text: string): number;
}

/**
 * The default estimate of an OpenAI-style BPE token count, made to err on the high side so a budget it accepts
 * fits the real tokenizer too. The text is cut into the pieces a GPT pre-tokenizer would make, and each piece is
 * charged:
 * - a run of Latin, Greek or Cyrillic letters: one token per four letters, rounded up (English words average
 *   1.2 to 1.4 BPE tokens; this charges 1.5 on average for them);
 * - a run of digits: one token per three digits, rounded up (cl100k and o200k split numbers in groups of three);
 * - any other letter (CJK, Thai, …): one token each;
 * - any punctuation mark or symbol: one token each;
 * - whitespace: nothing (BPE merges a space into the token after it), except one token per line break run.
 */
export const estimateTokenizer: Tokenizer = {
  name: 'axon-estimate@1',
  count(text: string): number {
    let tokens = 0;
    for (const match of text.matchAll(/(\p{Script=Latin}+|\p{Script=Greek}+|\p{Script=Cyrillic}+)|(\p{N}+)|(\p{L}|\p{M})|(\n+)|(\S)/gu)) {
      if (match[1] !== undefined) tokens += Math.ceil(match[1].length / 4);
      else if (match[2] !== undefined) tokens += Math.ceil(match[2].length / 3);
      else tokens += 1;
    }
    return tokens;
  },
};
