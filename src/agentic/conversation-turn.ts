import type { ConversationTurn } from '../contracts/chat-history.ts';
import type { Citation } from '../document.ts';
import type { AgenticResult } from './types.ts';

/**
 * The conversation turn an agentic run's result records (for `ChatHistory.append`): the question as asked, the
 * question it searched, its answer (without citation markers), and as citations the results its spans cite, each
 * labelled by its position among the results (`[n]` is result n).
 */
export function agenticConversationTurn(result: AgenticResult, askedAt: string, answeredAt = new Date().toISOString()): ConversationTurn {
  return {
    question: result.question,
    searchedQuestion: result.searchedQuestion ?? result.question,
    answer: result.answer ?? '',
    citations: agenticCitations(result),
    runId: result.runId,
    askedAt,
    answeredAt,
  };
}

/** The results an agentic answer's spans cite, in result order, as citations labelled by position (`[n]` is result n). */
export function agenticCitations(result: AgenticResult): Citation[] {
  const cited = [...new Set(result.citations.flatMap((citation) => citation.references.map((reference) => reference.resultIndex)))].sort((a, b) => a - b);
  return cited.flatMap((index): Citation[] => {
    const item = result.results[index];
    if (item === undefined) return [];
    const citation: Citation = { label: index + 1, id: item.id, sourceType: item.sourceType, sourceName: item.sourceName };
    if (typeof item.metadata.pageNumber === 'number') citation.pageNumber = item.metadata.pageNumber;
    if (typeof item.metadata.chunkIndex === 'number') citation.chunkIndex = item.metadata.chunkIndex;
    return [citation];
  });
}
