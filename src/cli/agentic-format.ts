import type { AgenticResult, AgenticTraceEvent } from '../agentic/types.ts';

/** One line per closed step: when, which, how it went, and the gist of its output. */
export function formatAgenticEvent(event: AgenticTraceEvent): string {
  const head = `[${event.atMs.toFixed(1).padStart(8)} ms] ${event.step}${event.iteration > 0 ? ` #${event.iteration}` : ''} · ${event.status}${event.ms === undefined ? '' : ` (${event.ms} ms)`}`;
  const lines = [`${head}  ${describe(event)}`];
  for (const warning of event.warnings) lines.push(`               warning: ${warning}`);
  return lines.join('\n');
}

/** The answer, each cited span with the results it cites, then how the run ended. */
export function formatAgenticResult(result: AgenticResult): string {
  const lines: string[] = [];
  if (result.status === 'blocked') lines.push(`Blocked by the guardrail (${result.blocked?.stage}): ${result.blocked?.reason}`);
  else if (result.answer !== undefined) lines.push(result.answer.trim());
  if (result.citations.length > 0) {
    lines.push('', 'Citations:');
    result.citations.forEach((citation, index) => {
      const text = result.answer!.slice(citation.startIndex, citation.endIndex);
      const sources = citation.references.map((reference) => {
        const item = result.results[reference.resultIndex];
        const chunk = typeof item.metadata.chunkIndex === 'number' ? `#${item.metadata.chunkIndex}` : '';
        return `result ${reference.resultIndex + 1}: ${item.sourceName || item.sourceType}${chunk} (${item.retriever})`;
      });
      lines.push(`  ${index + 1}. [${citation.startIndex}, ${citation.endIndex}) ${JSON.stringify(truncate(text, 100))}`, `     ${sources.join('; ')}`);
    });
  }
  if (result.droppedCitations.length > 0) lines.push('', `${result.droppedCitations.length} citation${result.droppedCitations.length === 1 ? ' was' : 's were'} dropped: ${result.droppedCitations.map((dropped) => dropped.reason).join('; ')}`);
  lines.push(
    '',
    `Stopped: ${result.stopReason.replace(/_/g, ' ')} after ${result.iterations} round${result.iterations === 1 ? '' : 's'}, ${result.subQueries} sub-quer${result.subQueries === 1 ? 'y' : 'ies'}, ` +
      `${result.searches} search${result.searches === 1 ? '' : 'es'}, ${result.results.length} result${result.results.length === 1 ? '' : 's'} (${result.planner} planner, ${result.ms} ms)`,
  );
  for (const failure of result.failures) lines.push(`  ${failure.step}${failure.iteration > 0 ? ` #${failure.iteration}` : ''}: ${failure.reason}${failure.detail ? ` ${JSON.stringify(failure.detail)}` : ''}`);
  return lines.join('\n');
}

function describe(event: AgenticTraceEvent): string {
  const input = event.input;
  const output = event.output ?? {};
  switch (event.step) {
    case 'speculativeRetrieval':
      return `${JSON.stringify(input.query)} → ${String(output.results ?? 0)} results`;
    case 'planning': {
      const planned = (output.subQueries as { query: string; retriever: string }[] | undefined) ?? [];
      const expanded = (output.expandDocuments as unknown[] | undefined) ?? [];
      const rejected = (output.rejected as { query?: string; retriever?: string; result?: number; reason: string }[] | undefined) ?? [];
      if (output.error) return String(output.error);
      const parts = [...planned.map((subQuery) => `${subQuery.retriever}: ${JSON.stringify(subQuery.query)}`), ...(expanded.length > 0 ? [`expand ${expanded.length} document(s)`] : [])];
      const refused = rejected.map((entry) => (entry.query === undefined ? `result ${entry.result} (${entry.reason})` : `${entry.retriever}: ${JSON.stringify(entry.query)} (${entry.reason})`));
      return [parts.join('; ') || 'nothing new to search', ...(refused.length > 0 ? [`rejected: ${refused.join('; ')}`] : [])].join('; ').replace(/^nothing new to search; /, '');
    }
    case 'retrieval':
      return output.error ? `${input.retriever}: ${String(output.error)}` : `${input.retriever}: ${JSON.stringify(input.query)} → ${String(output.found)} found, ${String(output.new)} new`;
    case 'documentExpansion':
      return output.error ? String(output.error) : `${String(input.sourceName)} → ${String(output.chunks)} chunks`;
    case 'sufficiency':
      return output.error ? String(output.error) : output.sufficient ? 'sufficient' : `insufficient; missing: ${JSON.stringify(output.missing)}`;
    case 'guardrail':
      return `${String(input.stage)}: ${output.error ? String(output.error) : output.action === 'block' ? `block (${String(output.reason)})` : 'allow'}`;
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
