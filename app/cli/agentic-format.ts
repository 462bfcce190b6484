import type { AgenticResult, AgenticTraceEvent } from '../../src/agentic/types.ts';

/** One line per closed step: when, which, how it went, and the gist of its output. */
export function formatAgenticEvent(event: AgenticTraceEvent): string {
  const round = event.iteration > 0 ? ` #${event.iteration}` : '';
  const took = event.ms === undefined ? '' : ` (${event.ms} ms)`;
  const head = `[${event.atMs.toFixed(1).padStart(8)} ms] ${event.step}${round} · ${event.status}${took}`;
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
  const dropped = result.droppedCitations;
  if (dropped.length > 0) lines.push('', `${count(dropped.length, 'citation')} dropped: ${dropped.map((entry) => entry.reason).join('; ')}`);
  const counts = [count(result.subQueries, 'sub-query', 'sub-queries'), count(result.searches, 'search', 'searches'), count(result.results.length, 'result')];
  const reason = result.stopReason.replace(/_/g, ' ');
  lines.push('', `Stopped: ${reason} after ${count(result.iterations, 'round')}, ${counts.join(', ')} (${result.planner} planner, ${result.ms} ms)`);
  for (const failure of result.failures) {
    const round = failure.iteration > 0 ? ` #${failure.iteration}` : '';
    lines.push(`  ${failure.step}${round}: ${failure.reason}${failure.detail ? ` ${JSON.stringify(failure.detail)}` : ''}`);
  }
  return lines.join('\n');
}

function describe(event: AgenticTraceEvent): string {
  const input = event.input;
  const output = event.output ?? {};
  switch (event.step) {
    case 'condense':
      return `${JSON.stringify(input.question)} → ${JSON.stringify(output.searchedQuestion ?? input.question)} (${String(output.method ?? '')}: ${String(output.reason ?? '')})`;
    case 'speculativeRetrieval':
      return `${JSON.stringify(input.query)} → ${String(output.results ?? 0)} results`;
    case 'planning': {
      const planned = (output.subQueries as { query: string; retriever: string }[] | undefined) ?? [];
      const expanded = (output.expandDocuments as unknown[] | undefined) ?? [];
      const rejected = (output.rejected as { query?: string; retriever?: string; result?: number; reason: string }[] | undefined) ?? [];
      if (output.error) return String(output.error);
      const parts = planned.map((subQuery) => `${subQuery.retriever}: ${JSON.stringify(subQuery.query)}`);
      if (expanded.length > 0) parts.push(`expand ${expanded.length} document(s)`);
      const refused = rejected.map((entry) =>
        entry.query === undefined ? `result ${entry.result} (${entry.reason})` : `${entry.retriever}: ${JSON.stringify(entry.query)} (${entry.reason})`,
      );
      if (refused.length > 0) parts.push(`rejected: ${refused.join('; ')}`);
      return parts.join('; ') || 'nothing new to search';
    }
    case 'retrieval':
      if (output.error) return `${input.retriever}: ${String(output.error)}`;
      return `${input.retriever}: ${JSON.stringify(input.query)} → ${String(output.found)} found, ${String(output.new)} new`;
    case 'documentExpansion':
      return output.error ? String(output.error) : `${String(input.sourceName)} → ${String(output.chunks)} chunks`;
    case 'sufficiency':
      return output.error ? String(output.error) : output.sufficient ? 'sufficient' : `insufficient; missing: ${JSON.stringify(output.missing)}`;
    case 'guardrail':
      return `${String(input.stage)}: ${output.error ? String(output.error) : output.action === 'block' ? `block (${String(output.reason)})` : 'allow'}`;
  }
}

function count(value: number, singular: string, plural = `${singular}s`): string {
  return `${value} ${value === 1 ? singular : plural}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
