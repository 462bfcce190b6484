/**
 * An approximate token count, for sizing chunks in tokens without shipping a tokenizer. Each run of letters
 * or digits counts one token per started 4 characters, and each other non-space character counts one. It
 * errs high (a long common word counts as several tokens where BPE tokenizers often use one), which is the
 * safe direction when a chunk must fit a model's input limit. It is additive over text split at whitespace,
 * which the splitters rely on.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)) {
    const length = match[0].length;
    tokens += length === 1 ? 1 : Math.ceil(length / 4);
  }
  return tokens;
}
