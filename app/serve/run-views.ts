/**
 * What the page and the API show of a run: a live answer, a stored trace or an agentic run, as JSON views (chunks
 * a citation can open, the spans of the answer that cite them, the packet without its text).
 */
import type { AgenticResult, AgenticResultItem, AgenticTraceEvent } from '../../src/agentic/types.ts';
import { evidenceBody } from '../../src/context/evidence.ts';
import type { ContextPacket } from '../../src/context/packet.ts';
import { isAgenticTrace, type StoredAgenticTrace, type StoredRun } from '../../src/context/trace-store.ts';
import type { Citation, Document } from '../../src/document.ts';
import type { StageRecord } from '../../src/pipeline/trace.ts';
import type { RunUsage } from '../../src/pipeline/usage.ts';
import type { Answer } from '../../src/rag.ts';
import { citingTexts, quotedSpans, sharedSpans, type TextSpan } from './spans.ts';

/** One chunk a citation can open: where it comes from and the text the model was given. */
export interface ChunkView {
  sourceName: string;
  sourceType?: string;
  pageNumber?: number;
  chunkIndex?: number;
  content: string;
}

/**
 * A citation with the ranges of its chunk's text (`ChunkView.content`) that the citing sentence repeats word for
 * word (runs of three or more words; see `sharedSpans`); empty when it paraphrases.
 */
export type CitationView = Citation & { spans: TextSpan[] };

/** A run as the page draws it, from a live answer or a stored trace. */
export interface RunView {
  kind: 'pipeline';
  runId: string;
  /** When the run started (ISO 8601). */
  startedAt: string;
  question: string;
  /** In a conversation, the follow-up as it was searched, when the condense stage rewrote it. */
  searchedQuestion?: string;
  /** The conversation the run was asked in, for a live answer asked with `conversationId`. */
  conversationId?: string;
  status: string;
  stopReason: string;
  answer: string;
  citations: CitationView[];
  chunks: Record<string, ChunkView>;
  stages: StageRecord[];
  sources: Record<string, string>;
  packet: PacketView;
  /** What the run's provider calls consumed, and cost where the configuration has prices; absent in runs saved before it was kept. */
  usage?: RunUsage;
  ms: number;
}

/** The packet without section text (the evidence text is in `chunks`). */
export type PacketView = Omit<ContextPacket, 'sections'> & { sections: Omit<ContextPacket['sections'][number], 'content'>[] };

function packetView(packet: ContextPacket): PacketView {
  return { ...packet, sections: packet.sections.map(({ content: _content, ...section }) => section) };
}

function chunkOf(document: Document): ChunkView {
  const page = document.metadata?.pageNumber;
  const chunk = document.metadata?.chunkIndex;
  return {
    sourceName: document.sourceName,
    sourceType: document.sourceType,
    ...(typeof page === 'number' ? { pageNumber: page } : {}),
    ...(typeof chunk === 'number' ? { chunkIndex: chunk } : {}),
    content: document.content,
  };
}

/** Each citation with the spans of its chunk its citing sentences quote. */
function citationViews(answer: string, citations: Citation[], chunks: Record<string, ChunkView>): CitationView[] {
  const claims = citingTexts(answer);
  return citations.map((citation) => {
    const chunk = chunks[citation.id];
    return { ...citation, spans: chunk ? quotedSpans(claims.get(citation.label) ?? [], chunk.content) : [] };
  });
}

/** The live answer as the page shows it: the documents are those given to the model, after redaction. */
export function answerView(answer: Answer): RunView {
  const chunks = Object.fromEntries(answer.documents.map((document) => [document.id, chunkOf(document)]));
  return {
    kind: 'pipeline',
    runId: answer.trace.runId,
    startedAt: answer.trace.startedAt,
    question: answer.trace.question,
    ...(answer.searchedQuestion !== undefined && answer.searchedQuestion !== answer.trace.question ? { searchedQuestion: answer.searchedQuestion } : {}),
    status: answer.status,
    stopReason: answer.stopReason,
    answer: answer.text,
    citations: citationViews(answer.text, answer.citations, chunks),
    chunks,
    stages: answer.trace.stages,
    sources: answer.trace.sources ?? {},
    packet: packetView(answer.packet),
    ...(answer.usage === undefined ? {} : { usage: answer.usage }),
    ms: answer.trace.ms,
  };
}

/**
 * A stored run as the page shows it. For a pipeline run the chunk text is the packet's evidence section, exactly
 * what the model saw, without its `<evidence>` frame; an agentic run comes with its steps.
 */
export function storedRunView(trace: StoredRun): RunView | AgenticRunView {
  if (isAgenticTrace(trace)) return agenticRunView(trace);
  const chunks: Record<string, ChunkView> = {};
  for (const section of trace.packet.sections) {
    if (section.kind !== 'retrieved_evidence' || section.sourceRefs[0] === undefined) continue;
    const citation = trace.citations.find((item) => item.id === section.sourceRefs[0]);
    chunks[section.sourceRefs[0]] = {
      sourceName: citation?.sourceName ?? section.title,
      ...(citation?.pageNumber !== undefined ? { pageNumber: citation.pageNumber } : {}),
      ...(citation?.chunkIndex !== undefined ? { chunkIndex: citation.chunkIndex } : {}),
      content: evidenceBody(section.content),
    };
  }
  // The run's own labels where the trace kept them; else the source names it holds (older traces).
  const sources: Record<string, string> = {};
  for (const item of trace.retrieved) if (item.sourceName) sources[item.id] = item.sourceName;
  for (const item of trace.packet.omitted) if (item.sourceName) sources[item.ref] ??= item.sourceName;
  for (const citation of trace.citations) sources[citation.id] = citation.sourceName;
  Object.assign(sources, trace.sources);
  return {
    kind: 'pipeline',
    runId: trace.runId,
    startedAt: trace.startedAt,
    question: trace.question,
    status: trace.status,
    stopReason: trace.stopReason,
    answer: trace.answer,
    citations: citationViews(trace.answer, trace.citations, chunks),
    chunks,
    stages: trace.stages,
    sources,
    packet: packetView(trace.packet),
    ...(trace.usage === undefined ? {} : { usage: trace.usage }),
    ms: trace.ms,
  };
}

/**
 * An agentic run as the page shows it: its results with where each was found, and the span citations, each
 * reference with the ranges of its result's text that the cited span repeats word for word.
 */
export interface AgenticRunView {
  kind: 'agentic';
  runId: string;
  /** When a stored run started (ISO 8601); a live result has none. */
  startedAt?: string;
  question: string;
  status: string;
  stopReason: string;
  answer: string;
  citations: { startIndex: number; endIndex: number; references: { resultIndex: number; spans: TextSpan[] }[] }[];
  results: (Pick<AgenticResultItem, 'id' | 'sourceName' | 'sourceType' | 'score' | 'expanded' | 'provenance' | 'content'> & { pageNumber?: number })[];
  iterations: number;
  subQueries: number;
  searches: number;
  planner: AgenticResult['planner'];
  /** A stored run's steps as they ended (a live run streams them as `agentic` events instead). */
  steps?: Omit<AgenticTraceEvent, 'type'>[];
  ms: number;
}

function spanCitationViews(answer: string, citations: AgenticResult['citations'], results: { content: string }[]): AgenticRunView['citations'] {
  return citations.map((citation) => ({
    startIndex: citation.startIndex,
    endIndex: citation.endIndex,
    references: citation.references.map((reference) => ({
      resultIndex: reference.resultIndex,
      spans: sharedSpans(answer.slice(citation.startIndex, citation.endIndex), results[reference.resultIndex]?.content ?? ''),
    })),
  }));
}

/** The agentic result without the usage figures and failures' internals; result text is what retrieval returned (redacted). */
export function agenticView(result: AgenticResult): AgenticRunView {
  return agenticRunView({
    ...result,
    answer: result.answer ?? '',
    results: result.results.map((item) => ({ ...item, pageNumber: typeof item.metadata.pageNumber === 'number' ? item.metadata.pageNumber : undefined })),
  });
}

/** The page's view of an agentic run, live (`agenticView`) or stored (with its start time and steps). */
function agenticRunView(
  run: Pick<
    StoredAgenticTrace,
    'runId' | 'question' | 'status' | 'stopReason' | 'answer' | 'citations' | 'iterations' | 'subQueries' | 'searches' | 'planner' | 'ms'
  > & {
    startedAt?: string;
    steps?: StoredAgenticTrace['steps'];
    results: readonly Pick<
      StoredAgenticTrace['results'][number],
      'id' | 'sourceName' | 'sourceType' | 'score' | 'expanded' | 'provenance' | 'content' | 'pageNumber'
    >[];
  },
): AgenticRunView {
  const results = run.results.map(({ id, sourceName, sourceType, score, expanded, provenance, content, pageNumber }) => ({
    id,
    sourceName,
    sourceType,
    score,
    expanded,
    provenance,
    content,
    ...(pageNumber !== undefined ? { pageNumber } : {}),
  }));
  return {
    kind: 'agentic',
    runId: run.runId,
    ...(run.startedAt !== undefined ? { startedAt: run.startedAt } : {}),
    question: run.question,
    status: run.status,
    stopReason: run.stopReason,
    answer: run.answer,
    citations: spanCitationViews(run.answer, run.citations, results),
    results,
    iterations: run.iterations,
    subQueries: run.subQueries,
    searches: run.searches,
    planner: run.planner,
    ...(run.steps !== undefined ? { steps: run.steps } : {}),
    ms: run.ms,
  };
}
