import type { Answer } from '../rag.ts';
import type { RunTrace, StageRecord } from '../pipeline/trace.ts';
import { formatCitation } from '../context/evidence.ts';

/** The answer, then its citations as `[n] source:page#chunk`. */
export function formatAnswer(answer: Answer): string {
  const lines = [answer.text.trim()];
  if (answer.citations.length > 0) {
    lines.push('', 'Citations:');
    for (const citation of answer.citations) lines.push(`  [${citation.label}] ${formatCitation(citation)}  (${citation.id})`);
  }
  return lines.join('\n');
}

/** One block per stage: what went in, what came out, the best scores, what was dropped and why. */
export function formatTrace(trace: RunTrace, options: { maxScores?: number; maxDropped?: number } = {}): string {
  const maxScores = options.maxScores ?? 5;
  const maxDropped = options.maxDropped ?? 5;
  const lines = [`Trace ${trace.runId}  (${trace.ms} ms)  question: ${JSON.stringify(trace.question)}`];
  trace.stages.forEach((stage, index) => {
    lines.push(`  ${index + 1}. ${stage.stage} · ${stage.name}  ${describeCounts(stage)}  ${stage.ms} ms`);
    for (const query of stage.queries ?? []) lines.push(`       query: ${JSON.stringify(query)}`);
    const scored = stage.outputIds.slice(0, maxScores).map((id) => `${shortId(id)}=${formatScore(stage.scores[id])}`);
    if (scored.length > 0) lines.push(`       top: ${scored.join('  ')}${stage.outputIds.length > maxScores ? '  …' : ''}`);
    for (const dropped of stage.dropped.slice(0, maxDropped)) lines.push(`       dropped ${shortId(dropped.id)}: ${dropped.reason}`);
    if (stage.dropped.length > maxDropped) lines.push(`       … and ${stage.dropped.length - maxDropped} more dropped`);
    for (const warning of stage.warnings) lines.push(`       warning: ${warning}`);
  });
  return lines.join('\n');
}

function describeCounts(stage: StageRecord): string {
  if (stage.stage === 'pre-process' || stage.stage === 'embed') return `${stage.queries?.length ?? 0} quer${stage.queries?.length === 1 ? 'y' : 'ies'}`;
  if (stage.stage === 'search') return `→ ${stage.outputIds.length} found`;
  return `${stage.inputIds.length} → ${stage.outputIds.length}${stage.dropped.length ? ` (${stage.dropped.length} dropped)` : ''}`;
}

function shortId(id: string): string {
  return id.length > 12 ? id.slice(0, 12) : id;
}

function formatScore(score: number | undefined): string {
  return score === undefined ? '?' : score.toFixed(4);
}
