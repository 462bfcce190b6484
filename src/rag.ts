import type { ChatFinish, ChatProvider } from './contracts/chat.ts';
import type { EmbeddingsProvider } from './contracts/embeddings.ts';
import { supportsKeywordSearch } from './contracts/keyword-search.ts';
import type { PostProcessor } from './contracts/post-processor.ts';
import type { PreProcessor, SearchQuery } from './contracts/pre-processor.ts';
import type { VectorStore } from './contracts/vector-store.ts';
import { describeUncovered } from './answer/coverage.ts';
import { extractiveAnswer } from './answer/extractive.ts';
import { ContextBuilder, DATA_RULES, type ContextBuilderOptions, type MemoryInput, type ToolResultInput } from './context/builder.ts';
import {
  CONFLICT_CHECK_PROMPT_VERSION,
  detectConflicts,
  detectConflictsWithModel,
  findSuperseded,
  judgeModelAnswer,
  uncitedSentences,
  type ContractStatus,
  type EvidenceConflict,
} from './context/contract.ts';
import { checkEligibility, eligibilityFilter, type CallerContext, type EligibilityPolicy } from './context/eligibility.ts';
import { citationOf, EVIDENCE_RULES, extractCitations, type Evidence } from './context/evidence.ts';
import { renderMessages, type ContextPacket, type OmittedRef } from './context/packet.ts';
import { parseOptions } from './runtime/options.ts';
import { stableHash, storedCaller, type PipelineVersion, type StoredTrace, type TraceStore } from './context/trace-store.ts';
import { normalizeDocument, type Citation, type Document, type DocumentInput, type Vector } from './document.ts';
import { AxonError, IndexEmptyError, throwIfAborted } from './errors.ts';
import { parseFilter } from './filter/parse.ts';
import type { Filter } from './filter/types.ts';
import { deduplicate } from './pipeline/dedupe.ts';
import { reciprocalRankFusion, type RankedList } from './pipeline/fusion.ts';
import { retrievalDefaultsFor } from './pipeline/retrieval-defaults.ts';
import { prepareTelemetry } from './pipeline/telemetry.ts';
import { TraceRecorder, type RunTrace, type StageRecord } from './pipeline/trace.ts';
import { assertVector, embedAll } from './runtime/embed.ts';

/**
 * How candidates are found: `vector` (embeddings, cosine), `keyword` (BM25 over the store's keyword index; no
 * embedding at all), or `hybrid` (both for every query, fused by reciprocal rank fusion, k = 60).
 */
export type SearchMode = 'vector' | 'keyword' | 'hybrid';

export const SEARCH_MODES: readonly SearchMode[] = ['vector', 'keyword', 'hybrid'];

/** Per-retriever weights of hybrid fusion: each list's RRF contributions are multiplied by its weight. */
export interface HybridWeights {
  /** @default 1 */
  vector?: number;
  /** @default 1 */
  keyword?: number;
}

export interface RetrieveOptions {
  /** Documents fetched from the store per search query (per retriever, in hybrid mode). @default the store's topK (50) */
  topK?: number;
  /**
   * `vector`, `keyword` or `hybrid`. Keyword and hybrid need a store with a keyword index (`FileStore`,
   * `MemoryStore`). The keyword query is the search query's text: with HyDE, the hypothetical passage.
   * @default this pipeline's `searchMode()` (`hybrid` with a keyword index, else `vector`, unless a subclass or the configuration says otherwise)
   */
  searchMode?: SearchMode;
  /** Weights of the vector and keyword lists in hybrid fusion. @default this pipeline's `hybridWeights()` ({ vector: 1, keyword: 1 }) */
  hybridWeights?: HybridWeights;
  /** Metadata filter applied inside the search (SPEC §4). */
  filter?: Filter;
  /** Candidates of an approximate vector search (a store with an ANN index); see `VectorSearchOptions.ef`. @default the store's */
  ef?: number;
  /** Scan exactly even where the store would use its ANN index. @default false */
  exact?: boolean;
  signal?: AbortSignal;
  /** Use this id for the run (and its trace) instead of a random UUID. */
  runId?: string;
  /**
   * Who is asking. Their tenant and roles become a store filter applied inside the search (so `topK` is spent on
   * documents they may see), and every document is checked again before it is returned (tenant, roles, redaction,
   * trust, freshness at `caller.now`). Without a caller the check still runs, for a caller of no tenant and no role,
   * but the search is not filtered.
   */
  caller?: CallerContext;
}

/** How the context packet given to the model is assembled and budgeted. */
export interface ContextOptions extends Omit<ContextBuilderOptions, 'runId'> {
  /** Policies the answer must follow; pinned, placed after the instructions. @default [] */
  policies?: string[];
  /** The task's goal or working state; pinned. */
  goal?: string;
  /** Tool outputs given to the model as data. @default [] */
  toolResults?: ToolResultInput[];
  /** Memories given to the model as data. @default [] */
  memories?: MemoryInput[];
  /** Worked examples. @default [] */
  examples?: string[];
  /** Known gaps to tell the model about. @default [] */
  exclusions?: string[];
}

/** Says whether a run must be refused; a reason refuses it (the model is not called), `undefined` lets it go on. */
export type Guardrail = (input: {
  question: string;
  caller: CallerContext | undefined;
  packet: ContextPacket;
}) => string | undefined | Promise<string | undefined>;

export interface AnswerOptions extends RetrieveOptions {
  /** The packet's budget and extra sections, over this pipeline's `contextOptions()`. */
  context?: ContextOptions;
  /** Checked after the packet is built and before the model is called. */
  guardrail?: Guardrail;
  /** Where the run's trace is saved. @default this pipeline's `traceStore()` (none unless a subclass gives one) */
  traceStore?: TraceStore;
  /** Version facts only the caller knows (the configuration hash, splitter settings), recorded in the trace. */
  pipelineVersion?: Partial<PipelineVersion>;
  /**
   * How conflicting evidence is found: `metadata` (versions, `supersedes`, `facts`), or `model`, which also asks the
   * chat model against a schema when the metadata shows none (one more model call). @default this pipeline's `conflictCheck()` ('metadata')
   */
  conflictCheck?: ConflictCheck;
}

/** How conflicting evidence is found; see `AnswerOptions.conflictCheck`. */
export type ConflictCheck = 'metadata' | 'model';

export interface RetrievalResult {
  /** The documents after every post-processor and the eligibility check (redacted where `pii`), best first. */
  documents: Document[];
  /** Documents refused by the eligibility check (`not_allowed`, `stale`) or superseded (`stale`). */
  omitted: OmittedRef[];
  /** The filter the searches ran with: the caller's eligibility filter and the given one, combined. */
  filter?: Filter;
  /** Every document the searches found, with its score there, before fusion, post-processing and eligibility. */
  retrieved: { id: string; score: number; sourceName: string }[];
  /** The search queries the pre-processors produced. */
  queries: SearchQuery[];
  /** How the candidates were found. */
  searchMode: SearchMode;
  trace: RunTrace;
}

/**
 * `answered`: the text answers from cited evidence. `missing_evidence`: nothing eligible supports an answer (the
 * model was not called). `conflicting_evidence`: eligible sources disagree (each is cited). `refused`: a guardrail,
 * the policy or the budget refused the run.
 */
export type AnswerStatus = ContractStatus;

/** Why a run stopped where it did. */
export type StopReason =
  | 'answered'
  | 'no_eligible_evidence'
  | 'no_matching_sentence'
  | 'insufficient_coverage'
  | 'model_found_no_answer'
  | 'uncited_answer'
  | 'conflicting_metadata'
  | 'conflicting_answer'
  | 'guardrail'
  | 'budget'
  | 'escalation'
  | 'clarifying_question';

export interface Answer {
  status: AnswerStatus;
  text: string;
  /** `generated` by the chat model, or `extractive` (quoted sentences) when no chat model is configured. */
  mode: 'generated' | 'extractive';
  citations: Citation[];
  /** The documents given to the model as evidence, in label order (label = index + 1). */
  documents: Document[];
  /** Ids of the evidence in the packet, in label order. */
  evidenceRefs: string[];
  /** What is missing, when the status is `missing_evidence`. */
  missingEvidence?: string[];
  /** Sentences of an `answered` answer that state something without a citation. */
  uncitedSentences?: string[];
  /** The disagreement, when the status is `conflicting_evidence`. */
  conflicts?: EvidenceConflict[];
  /** Why the run was refused, when the status is `refused`. */
  refusal?: string;
  stopReason: StopReason;
  /** Everything left out of the packet, with the reason: eligibility, supersession, relevance, duplicates, budget. */
  omitted: OmittedRef[];
  /** What the model was given (or would have been). */
  packet: ContextPacket;
  trace: RunTrace;
  /**
   * Set (true) when the chat model's reply was cut off: it hit the token limit, or its stream stopped before
   * the end (the trace's generation stage says which). The text is then partial; absent for a whole reply.
   */
  truncated?: true;
}

/** What `stream` yields, in order: stage records as they finish, answer text deltas, then one result. */
export type RagEvent = { type: 'stage'; record: StageRecord } | { type: 'delta'; text: string } | { type: 'result'; answer: Answer };

export interface AddDocumentsOptions {
  signal?: AbortSignal;
  /** Called as embedding progresses. */
  onProgress?: (embedded: number, total: number) => void;
}

/** The parts a `RAG` was built from, as its overridable methods returned them. */
export interface RagComponents {
  embeddings: EmbeddingsProvider;
  store: VectorStore;
  preProcessors: PreProcessor[];
  postProcessors: PostProcessor[];
  chat: ChatProvider | undefined;
}

const COMPONENT = 'rag';
const NO_EVIDENCE_TEXT = 'I could not find anything in the indexed documents that answers this question.';

/**
 * A retrieval-augmented generation pipeline. Subclass it and choose the parts:
 *
 * ```ts
 * class SupportBot extends RAG {
 *   protected embeddings() { return new LocalHashEmbeddings(); }
 *   protected vectorStore() { return new FileStore({ directory: '.axon' }); }
 *   protected postProcessors() { return [new AdaptiveThreshold({ multiplier: 0.6 })]; }
 * }
 * const answer = await new SupportBot().answer('How do I reset my password?');
 * ```
 *
 * Each part is asked for once, on first use, and kept for the life of the instance.
 */
export abstract class RAG {
  private resolved: RagComponents | undefined;

  /** The embeddings provider for documents and queries. */
  protected abstract embeddings(): EmbeddingsProvider;
  /** Where documents live. Its `topK` (50 by default) is how many candidates each search returns. */
  protected abstract vectorStore(): VectorStore;
  /** Query-side stages, run in order. @default [] */
  protected preProcessors(): PreProcessor[] {
    return [];
  }
  /** Document-side stages, run in order after search. @default [] */
  protected postProcessors(): PostProcessor[] {
    return [];
  }
  /** The chat model that writes answers. Without one, `answer` quotes the best sentences (extractive). */
  protected chat(): ChatProvider | undefined {
    return undefined;
  }
  /**
   * How candidates are found when a call does not say: `vector`, `keyword` or `hybrid`.
   * @default 'hybrid' when the store has a keyword index (`supportsKeywordSearch`), else 'vector'
   */
  protected searchMode(): SearchMode {
    return supportsKeywordSearch(this.components().store) ? 'hybrid' : 'vector';
  }
  /**
   * Weights of the vector and keyword lists in hybrid fusion when a call does not say.
   * @default BM25-led (`LOCAL_EMBEDDINGS_HYBRID_WEIGHTS`) when the embeddings are lexical (`capabilities.lexical`,
   * as the local hashing embedder's are), else `{ vector: 1, keyword: 1 }`
   */
  protected hybridWeights(): HybridWeights {
    return retrievalDefaultsFor(this.components())?.hybridWeights ?? { vector: 1, keyword: 1 };
  }
  /** The system instructions given to the chat model, before Axon's evidence rules. */
  protected instructions(): string {
    return "You are a helpful assistant that answers questions about the user's documents accurately and concisely.";
  }
  /** The rules eligibility is judged by (SPEC §7). @default {} (untenanted documents shared, no default maximum age) */
  protected eligibilityPolicy(): EligibilityPolicy {
    return {};
  }
  /** How the context packet is budgeted when a call does not say. @default {} (8000 tokens, 1000 kept for the answer) */
  protected contextOptions(): ContextOptions {
    return {};
  }
  /** How conflicting evidence is found when a call does not say. @default 'metadata' */
  protected conflictCheck(): ConflictCheck {
    return 'metadata';
  }
  /** Where every run's trace is saved when a call does not say. @default undefined (not saved) */
  protected traceStore(): TraceStore | undefined {
    return undefined;
  }

  /**
   * Embed (where no embedding is given) and store documents. Validates every document before writing any:
   * on error nothing is stored. Returns the ids, in input order.
   *
   * @throws AxonError `INVALID_DOCUMENT`, `DUPLICATE_ID`, `DIMENSION_MISMATCH`, `INVALID_VECTOR`
   */
  async addDocuments(documents: DocumentInput[], options: AddDocumentsOptions = {}): Promise<string[]> {
    const prepared = await this.prepareDocuments(documents, options);
    await this.components().store.add(prepared, { signal: options.signal });
    return prepared.map((document) => document.id);
  }

  /** Remove every document of a source type, or of one source. Returns how many were removed. */
  async deleteBySource(sourceType: string, sourceName?: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    if (typeof sourceType !== 'string' || sourceType === '') {
      throw new AxonError('INVALID_INPUT', 'sourceType must be a non-empty string.', { component: COMPONENT, details: { argument: 'sourceType' } });
    }
    if (sourceName !== undefined && typeof sourceName !== 'string') {
      throw new AxonError('INVALID_INPUT', 'sourceName must be a string when given.', { component: COMPONENT, details: { argument: 'sourceName' } });
    }
    return this.components().store.deleteBySource(sourceType, sourceName, options);
  }

  /**
   * Replace what is stored for each source present in `documents` with exactly these documents. Everything is
   * validated and embedded before anything is deleted, so a failure leaves the old documents in place.
   */
  async reindexBySource(documents: DocumentInput[], options: AddDocumentsOptions = {}): Promise<{ removed: number; added: number }> {
    const prepared = await this.prepareDocuments(documents, options);
    const { store } = this.components();
    const sources = new Map<string, { sourceType: string; sourceName: string }>();
    for (const document of prepared) sources.set(`${document.sourceType}\u0000${document.sourceName}`, document);
    let removed = 0;
    for (const { sourceType, sourceName } of sources.values()) removed += await store.deleteBySource(sourceType, sourceName, { signal: options.signal });
    await store.add(prepared, { signal: options.signal });
    return { removed, added: prepared.length };
  }

  /** Search without generating: documents after every stage, and the trace. */
  async retrieve(question: string, options: RetrieveOptions = {}): Promise<RetrievalResult> {
    const holder: { recorder?: TraceRecorder } = {};
    try {
      const run = this.runRetrieval(question, options, holder);
      for (;;) {
        const step = await run.next();
        if (step.done) {
          step.value.recorder.finish({ 'axon.status': 'retrieved', 'axon.document_count': step.value.result.documents.length });
          return step.value.result;
        }
      }
    } catch (error) {
      holder.recorder?.fail(error);
      throw error;
    }
  }

  /** Retrieve, then answer with citations (generated, or extractive when no chat model is configured). */
  async answer(question: string, options: AnswerOptions = {}): Promise<Answer> {
    for await (const event of this.stream(question, options)) {
      if (event.type === 'result') return event.answer;
    }
    throw new AxonError('INTERNAL', 'The run ended without a result.', {
      component: COMPONENT,
      fix: 'This is a bug in Axon: please report it with the stack trace.',
      details: { invariant: 'stream-ends-with-result' },
    });
  }

  /** Like `answer`, as events: each stage record when it finishes, answer text deltas, then the result. */
  async *stream(question: string, options: AnswerOptions = {}): AsyncGenerator<RagEvent, void, undefined> {
    // The schema's module (and zod) load with the first answer, not with the core.
    const { contextOptionsSchema } = await import('./context/options.ts');
    const settings: ContextOptions = parseOptions(contextOptionsSchema, { ...this.contextOptions(), ...options.context }, 'context');
    // Built once here only to reject budget options that do not fit together before any work is done.
    new ContextBuilder(settings);
    if (options.guardrail !== undefined && typeof options.guardrail !== 'function') {
      throw new AxonError('INVALID_OPTION', `guardrail must be a function, got ${typeof options.guardrail}.`, {
        component: COMPONENT,
        details: { option: 'guardrail' },
      });
    }
    if (options.conflictCheck !== undefined && options.conflictCheck !== 'metadata' && options.conflictCheck !== 'model') {
      const given = JSON.stringify(options.conflictCheck);
      throw new AxonError('INVALID_OPTION', `conflictCheck must be "metadata" or "model", got ${given}.`, {
        component: COMPONENT,
        details: { option: 'conflictCheck' },
      });
    }
    const holder: { recorder?: TraceRecorder } = {};
    try {
      yield* this.streamRun(question, options, settings, holder);
    } catch (error) {
      holder.recorder?.fail(error);
      throw error;
    } finally {
      // A consumer that stops reading early still closes the run's span.
      holder.recorder?.finish({ 'axon.abandoned': true });
    }
  }

  private async *streamRun(
    question: string,
    options: AnswerOptions,
    settings: ContextOptions,
    holder: { recorder?: TraceRecorder },
  ): AsyncGenerator<RagEvent, void, undefined> {
    const run = this.runRetrieval(question, options, holder);
    let step = await run.next();
    while (!step.done) {
      yield { type: 'stage', record: step.value };
      step = await run.next();
    }
    const { result, recorder, signal } = step.value;
    const { chat } = this.components();
    // The packet's run id is the trace's, so a stored packet and trace always belong together.
    const builder = new ContextBuilder({ ...settings, runId: recorder.trace.runId });

    const assembly = recorder.begin('context', 'evidence', { documents: result.documents }, signal);
    builder.systemInstruction(this.instructions());
    for (const policy of settings.policies ?? []) builder.policy(policy);
    builder.userRequest(result.trace.question);
    if (settings.goal) builder.workingMemory(settings.goal);
    for (const tool of settings.toolResults ?? []) builder.toolResult(tool);
    for (const memory of settings.memories ?? []) builder.memory(memory);
    for (const example of settings.examples ?? []) builder.example(example);
    for (const exclusion of settings.exclusions ?? []) builder.exclusion(exclusion);
    for (const omitted of result.omitted) builder.omit(omitted.ref, omitted.reason, omitted.detail, omitted.sourceName);
    builder.evidence(result.documents);
    const { packet, evidence } = builder.assemble();
    const given = new Set(evidence.map((item) => item.document.id));
    for (const omitted of packet.omitted) {
      if (!result.documents.some((document) => document.id === omitted.ref) || given.has(omitted.ref)) continue;
      assembly.drop(omitted.ref, `${omitted.reason}${omitted.detail ? `: ${omitted.detail}` : ''}`);
    }
    for (const degradation of packet.degradations) assembly.warn(`${degradation.kind}: ${degradation.detail}`);
    const sectionCounts: Record<string, number> = {};
    for (const section of packet.sections) sectionCounts[section.kind] = (sectionCounts[section.kind] ?? 0) + 1;
    yield {
      type: 'stage',
      record: assembly.end({
        documents: evidence.map((item) => item.document),
        detail: { packetId: packet.packetId, budget: packet.budget, tokenizer: packet.tokenizer, sections: sectionCounts },
      }),
    };

    const generation = recorder.begin('generate', chat?.name ?? 'extractive-answer', { documents: evidence.map((item) => item.document) }, signal);
    const base = { evidence, packet, omitted: packet.omitted, trace: recorder.trace };
    const refusal = await options.guardrail?.({ question: result.trace.question, caller: options.caller, packet });
    const budgetRefusal = packet.degradations.find((degradation) => ['refusal', 'escalation', 'clarifying_question'].includes(degradation.kind));
    let conflicts = detectConflicts(
      evidence.map((item) => item.document),
      result.trace.question,
    );
    const conflictCheck = options.conflictCheck ?? this.conflictCheck();
    if (conflictCheck === 'model' && chat && conflicts.length === 0 && refusal === undefined && !budgetRefusal && evidence.length >= 2) {
      const check = await detectConflictsWithModel(chat, result.trace.question, evidence, signal);
      if (check.invalidReply !== undefined) {
        generation.warn(`The conflict check's reply did not fit its schema; treated as no conflict: ${JSON.stringify(check.invalidReply)}`);
      }
      if (check.conflict) conflicts = [check.conflict];
    }
    const mode: Answer['mode'] = chat ? 'generated' : 'extractive';
    let answer: Answer;
    if (refusal !== undefined) {
      generation.warn(`Refused by the guardrail: ${refusal}`);
      const text = `I cannot answer this: ${refusal}`;
      answer = this.makeAnswer({ ...base, status: 'refused', text, mode, citations: [], stopReason: 'guardrail', refusal });
    } else if (budgetRefusal) {
      generation.warn(budgetRefusal.detail);
      const texts = {
        refusal: 'I cannot answer this: the instructions and the question alone exceed the context budget.',
        escalation: 'I cannot answer this reliably: the policy requires complete evidence, and not all of it fits the context budget.',
        clarifying_question:
          `Your question matches more documents than I can take into account at once. ${budgetRefusal.detail} ` +
          'Could you narrow it down, for example to one product, period or document?',
      };
      const stops = { refusal: 'budget', escalation: 'escalation', clarifying_question: 'clarifying_question' } as const;
      const kind = budgetRefusal.kind as keyof typeof texts;
      const refusalDetail = budgetRefusal.detail;
      answer = this.makeAnswer({ ...base, status: 'refused', text: texts[kind], mode, citations: [], stopReason: stops[kind], refusal: refusalDetail });
    } else if (evidence.length === 0) {
      generation.warn('No eligible evidence survived retrieval; the model was not called.');
      const missingEvidence = [missingDescription(result.trace.question, packet.omitted)];
      const stopReason = 'no_eligible_evidence';
      answer = this.makeAnswer({ ...base, status: 'missing_evidence', text: NO_EVIDENCE_TEXT, mode, citations: [], stopReason, missingEvidence });
    } else if (conflicts.length > 0) {
      generation.warn(`The evidence disagrees (${conflicts.map((conflict) => conflict.key).join(', ')}); the model was not called.`);
      const byId = new Map(evidence.map((item) => [item.document.id, item]));
      const cited = [...new Set(conflicts.flatMap((conflict) => conflict.refs))].map((id) => citationOf(byId.get(id)!));
      const text = conflicts.map((conflict) => describeConflict(conflict, byId)).join('\n');
      yield { type: 'delta', text };
      answer = this.makeAnswer({ ...base, status: 'conflicting_evidence', text, mode, citations: cited, stopReason: 'conflicting_metadata', conflicts });
    } else if (chat === undefined) {
      const extract = extractiveAnswer(result.trace.question, evidence);
      if (extract.text === '') {
        generation.warn('No sentence of the evidence shares a word with the question.');
        const missingEvidence = [`No sentence of the evidence matches "${result.trace.question}".`];
        const stopReason = 'no_matching_sentence';
        answer = this.makeAnswer({ ...base, status: 'missing_evidence', text: NO_EVIDENCE_TEXT, mode, citations: [], stopReason, missingEvidence });
      } else if (!extract.coverage.sufficient) {
        // The closest sentences do not cover the question: quoting them as an answer would mislead.
        const missingEvidence = [describeUncovered(extract.coverage)];
        generation.warn(missingEvidence[0]);
        const text = `${NO_EVIDENCE_TEXT} ${missingEvidence[0]}`;
        yield { type: 'delta', text };
        const stopReason = 'insufficient_coverage';
        answer = this.makeAnswer({ ...base, status: 'missing_evidence', text, mode, citations: [], stopReason, missingEvidence });
      } else {
        yield { type: 'delta', text: extract.text };
        const citations = [...new Set(extract.labels)].map((label) => citationOf(evidence[label - 1]));
        answer = this.makeAnswer({ ...base, status: 'answered', text: extract.text, mode: 'extractive', citations, stopReason: 'answered' });
      }
    } else {
      const messages = renderMessages(packet);
      let text = '';
      let finish: ChatFinish | undefined;
      for await (const delta of chat.stream(messages, { signal, onFinish: (finished) => (finish = finished) })) {
        throwIfAborted(signal, chat.name);
        if (typeof delta !== 'string') {
          throw new AxonError('PROVIDER_RESPONSE_INVALID', `The chat stream yielded ${typeof delta} instead of text.`, { component: chat.name });
        }
        if (delta === '') continue;
        text += delta;
        yield { type: 'delta', text: delta };
      }
      const { citations, unknownLabels } = extractCitations(text, evidence);
      if (unknownLabels.length > 0) generation.warn(`The answer cites evidence that does not exist: ${unknownLabels.map((label) => `[${label}]`).join(' ')}.`);
      if (citations.length === 0) generation.warn('The answer cites no evidence.');
      const uncited = uncitedSentences(text);
      if (uncited.length > 0) generation.warn(`${uncited.length} sentence${uncited.length === 1 ? '' : 's'} of the answer cite no evidence.`);
      // The model's status, checked against what it cites (the contract the extractive answer keeps too).
      const judged = judgeModelAnswer(
        result.trace.question,
        text,
        citations.map((citation) => citation.label),
        evidence,
      );
      const status = judged.status;
      const missingEvidence = judged.reason === 'insufficient_coverage' ? [describeUncovered(judged.coverage!)] : undefined;
      if (missingEvidence) generation.warn(`The answer's citations do not cover the question: ${missingEvidence[0]}`);
      const conflicts = judged.conflict ? [judged.conflict] : undefined;
      answer = this.makeAnswer({
        ...base,
        status,
        text,
        mode: 'generated',
        citations,
        stopReason: judged.reason,
        uncitedSentences: uncited,
        missingEvidence,
        conflicts,
      });
      // Read through a function: TypeScript does not see the callback assign it.
      const ending = (() => finish)();
      if (ending?.truncated) {
        generation.warn(
          ending.reason === 'length'
            ? 'The answer was cut off: the chat model reached its token limit (raise maxTokens).'
            : `The answer was cut off: the chat stream ended before its end (${ending.reason}).`,
        );
        answer.truncated = true;
      }
    }
    const cited = answer.citations.map((citation) => citation.label);
    yield { type: 'stage', record: generation.end({ documents: evidence.map((item) => item.document), detail: { status: answer.status, cited } }) };
    const store = options.traceStore ?? this.traceStore();
    if (store) await store.save(this.storedTrace(answer, result, options));
    recorder.finish({
      'axon.status': answer.status,
      'axon.evidence_count': answer.evidenceRefs.length,
      'axon.citation_count': answer.citations.length,
      'axon.omitted_count': answer.omitted.length,
    });
    yield { type: 'result', answer };
  }

  /**
   * What this run's answer depends on, for the trace: the embedding model and dimensions, the chat model, each
   * pre- and post-processor with its prompt version, the citation rules, the packet's policy version and tokenizer,
   * and the eligibility policy; `extra` adds what only the caller knows (the configuration hash, splitter settings).
   */
  pipelineVersion(packet: Pick<ContextPacket, 'policyVersion' | 'tokenizer'>, extra: Partial<PipelineVersion> = {}): PipelineVersion {
    const { embeddings, chat, preProcessors, postProcessors } = this.components();
    const described = (component: object & { name: string }) => {
      const entry: { name: string; promptVersion?: string } = { name: component.name };
      const promptVersion = (component as { promptVersion?: unknown }).promptVersion;
      if (typeof promptVersion === 'string') entry.promptVersion = promptVersion;
      return entry;
    };
    const modelOf = (component: object) => {
      const model = (component as { model?: unknown }).model;
      return typeof model === 'string' ? { model } : {};
    };
    const policy = this.eligibilityPolicy();
    return {
      embedding: { name: embeddings.name, ...modelOf(embeddings), ...(embeddings.dimensions === undefined ? {} : { dimensions: embeddings.dimensions }) },
      ...(chat ? { chat: { name: chat.name, ...modelOf(chat) } } : {}),
      preProcessors: preProcessors.map(described),
      postProcessors: postProcessors.map(described),
      citationRules: stableHash(`${EVIDENCE_RULES}\n${DATA_RULES}`),
      policyVersion: packet.policyVersion,
      tokenizer: packet.tokenizer,
      eligibilityPolicy: stableHash({ ...policy, redactor: policy.redactor?.name }),
      conflictCheck: this.conflictCheck() === 'model' ? CONFLICT_CHECK_PROMPT_VERSION : 'metadata',
      ...extra,
    };
  }

  /** The parts this pipeline runs with (each asked for once, on first use). Useful for ingestion and debugging. */
  components(): RagComponents {
    this.resolved ??= {
      embeddings: this.embeddings(),
      store: this.vectorStore(),
      preProcessors: this.preProcessors(),
      postProcessors: this.postProcessors(),
      chat: this.chat(),
    };
    return this.resolved;
  }

  /**
   * Let the store finish and save what it holds in memory (`FileStore` saves an ANN graph that is ahead of
   * its snapshot). The pipeline can be used again afterwards; the store reloads on demand.
   */
  async close(): Promise<void> {
    if (this.resolved) await this.resolved.store.close?.();
  }

  // --- Internal helpers ---

  private makeAnswer(input: {
    status: AnswerStatus;
    text: string;
    mode: Answer['mode'];
    citations: Citation[];
    evidence: Evidence[];
    packet: ContextPacket;
    omitted: OmittedRef[];
    trace: RunTrace;
    stopReason: StopReason;
    missingEvidence?: string[];
    uncitedSentences?: string[];
    conflicts?: EvidenceConflict[];
    refusal?: string;
  }): Answer {
    const { evidence, ...rest } = input;
    const documents = evidence.map((item) => item.document);
    const answer: Answer = { ...rest, documents, evidenceRefs: documents.map((document) => document.id) };
    for (const key of ['missingEvidence', 'uncitedSentences', 'conflicts', 'refusal'] as const) if (answer[key] === undefined) delete answer[key];
    return answer;
  }

  private storedTrace(answer: Answer, result: RetrievalResult, options: AnswerOptions): StoredTrace {
    const caller = options.caller;
    const stored: StoredTrace = {
      format: 1,
      runId: answer.trace.runId,
      startedAt: answer.trace.startedAt,
      question: answer.trace.question,
      caller: storedCaller(caller),
      status: answer.status,
      stopReason: answer.stopReason,
      retrieved: result.retrieved,
      packet: answer.packet,
      citations: answer.citations,
      evidenceRefs: answer.evidenceRefs,
      answer: answer.text,
      version: this.pipelineVersion(answer.packet, {
        ...(options.conflictCheck ? { conflictCheck: options.conflictCheck === 'model' ? CONFLICT_CHECK_PROMPT_VERSION : 'metadata' } : {}),
        ...options.pipelineVersion,
      }),
      stages: answer.trace.stages,
      ms: answer.trace.ms,
    };
    if (answer.trace.sources !== undefined) stored.sources = answer.trace.sources;
    if (result.filter !== undefined) stored.filter = result.filter;
    if (answer.missingEvidence) stored.missingEvidence = answer.missingEvidence;
    if (answer.uncitedSentences) stored.uncitedSentences = answer.uncitedSentences;
    if (answer.conflicts) stored.conflicts = answer.conflicts;
    return stored;
  }

  private async prepareDocuments(inputs: DocumentInput[], options: AddDocumentsOptions): Promise<Document[]> {
    if (!Array.isArray(inputs)) {
      throw new AxonError('INVALID_INPUT', `documents must be an array, got ${inputs === null ? 'null' : typeof inputs}.`, {
        component: COMPONENT,
        details: { argument: 'documents' },
      });
    }
    const documents = inputs.map((input, position) => normalizeDocument(input, position, COMPONENT));
    const positions = new Map<string, number>();
    documents.forEach((document, position) => {
      const first = positions.get(document.id);
      if (first !== undefined) {
        throw new AxonError('DUPLICATE_ID', `documents[${first}] and documents[${position}] share the id "${document.id}".`, {
          component: COMPONENT,
          fix: 'Give each document a unique id, or leave ids out to have them derived from source, chunk index and content.',
        });
      }
      positions.set(document.id, position);
    });
    const { embeddings } = this.components();
    const missing = documents.filter((document) => document.embedding === undefined);
    if (missing.length > 0) {
      const vectors = await embedAll(
        embeddings,
        missing.map((document) => document.content),
        { inputType: 'document', signal: options.signal, onProgress: options.onProgress },
      );
      missing.forEach((document, index) => (document.embedding = vectors[index]));
    }
    const dimensions = embeddings.dimensions ?? documents[0]?.embedding?.length;
    documents.forEach((document, position) => assertVector(document.embedding, dimensions, COMPONENT, `documents[${position}].embedding`));
    return documents;
  }

  /**
   * The retrieval half of a run, as a generator so `stream` can report each stage as it finishes:
   * pre-process → embed → search (one per query and retriever) → fuse → de-duplicate → post-process.
   */
  private async *runRetrieval(
    question: string,
    options: RetrieveOptions,
    holder: { recorder?: TraceRecorder },
  ): AsyncGenerator<StageRecord, { result: RetrievalResult; recorder: TraceRecorder; signal: AbortSignal }, undefined> {
    if (typeof question !== 'string' || question.trim() === '') {
      throw new AxonError(
        'INVALID_QUESTION',
        `The question must be a non-empty string, got ${question === '' ? 'an empty string' : typeof question === 'string' ? 'only whitespace' : typeof question}.`,
        {
          component: COMPONENT,
          fix: "Pass the user's question as text.",
        },
      );
    }
    const { topK } = options;
    if (topK !== undefined && (typeof topK !== 'number' || !Number.isInteger(topK) || topK <= 0)) {
      throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
        component: COMPONENT,
        fix: 'Use a whole number of at least 1, e.g. 50.',
      });
    }
    if (options.filter !== undefined) parseFilter(options.filter, COMPONENT);
    const policy = this.eligibilityPolicy();
    const callerFilter = options.caller === undefined ? undefined : eligibilityFilter(options.caller, policy);
    const filter = callerFilter === undefined ? options.filter : options.filter === undefined ? callerFilter : { $and: [options.filter, callerFilter] };
    const signal = options.signal ?? new AbortController().signal;
    throwIfAborted(signal, COMPONENT);

    const { embeddings, store, preProcessors, postProcessors } = this.components();
    const mode = resolveSearchMode(options.searchMode ?? this.searchMode(), store);
    const weights = resolveHybridWeights({ ...this.hybridWeights(), ...options.hybridWeights });
    await prepareTelemetry();
    const recorder = new TraceRecorder(question, options.runId);
    holder.recorder = recorder;

    let queries: SearchQuery[] = [{ text: question, producedBy: [] }];
    for (const preProcessor of preProcessors) {
      const stage = recorder.begin('pre-process', preProcessor.name, { queries: queries.map((query) => query.text) }, signal);
      const next: SearchQuery[] = [];
      for (const query of queries) {
        const produced = await preProcessor.process(query, stage.context);
        throwIfAborted(signal, preProcessor.name);
        const usable = Array.isArray(produced) ? produced.filter((item) => item && typeof item.text === 'string' && item.text.trim() !== '') : [];
        if (usable.length === 0) {
          stage.warn(`Produced no usable query for "${query.text}"; searching with it unchanged.`);
          next.push(query);
        } else {
          next.push(...usable);
        }
      }
      queries = uniqueQueries(next);
      yield stage.end({ queries: queries.map((query) => query.text) });
    }

    // Keyword mode never embeds: BM25 needs only the text.
    let vectors: Vector[] = [];
    if (mode !== 'keyword') {
      const embedStage = recorder.begin('embed', embeddings.name, { queries: queries.map((query) => query.text) }, signal);
      vectors = await embedAll(
        embeddings,
        queries.map((query) => query.text),
        { inputType: 'query', signal },
      );
      yield embedStage.end({ detail: { dimensions: vectors[0]?.length } });
    }

    const lists: RankedList[] = [];
    const searchDetail = { topK: topK ?? store.topK, filtered: filter !== undefined, ...(callerFilter ? { eligibilityFiltered: true } : {}) };
    const retrieved = new Map<string, { id: string; score: number; sourceName: string }>();
    const remember = (found: Document[]) => {
      for (const document of found) {
        if (!retrieved.has(document.id)) retrieved.set(document.id, { id: document.id, score: document.score, sourceName: document.sourceName });
      }
    };
    for (let index = 0; index < queries.length; index++) {
      const prefix = queries.length > 1 ? `query ${index + 1}` : '';
      if (mode !== 'keyword') {
        const stage = recorder.begin('search', mode === 'hybrid' ? `${store.name}:vector` : store.name, { queries: [queries[index].text] }, signal);
        const found = await store.search(vectors[index], { topK, filter, ef: options.ef, exact: options.exact, signal });
        remember(found);
        lists.push({
          name: mode === 'hybrid' ? `${prefix} vector`.trim() : prefix || 'vector',
          documents: found,
          weight: mode === 'hybrid' ? weights.vector : 1,
        });
        const method = await store.searchMethod?.({ filter, exact: options.exact });
        yield stage.end({
          documents: found,
          detail: {
            ...searchDetail,
            retriever: 'vector',
            scale: 'cosine',
            ...(method ? { method } : {}),
            ...(method === 'ann' && options.ef !== undefined ? { ef: options.ef } : {}),
          },
        });
      }
      if (mode !== 'vector' && supportsKeywordSearch(store)) {
        const stage = recorder.begin('search', `${store.name}:keyword`, { queries: [queries[index].text] }, signal);
        const found = await store.keywordSearch(queries[index].text, { topK, filter, signal });
        remember(found);
        lists.push({
          name: mode === 'hybrid' ? `${prefix} keyword`.trim() : prefix || 'keyword',
          documents: found,
          weight: mode === 'hybrid' ? weights.keyword : 1,
        });
        yield stage.end({ documents: found, detail: { ...searchDetail, retriever: 'keyword', scale: 'bm25' } });
      }
    }
    if (lists.every((list) => list.documents.length === 0) && filter === undefined && (await store.count({ signal })) === 0) {
      throw new IndexEmptyError(store.name);
    }

    let documents: Document[];
    if (lists.length > 1) {
      const stage = recorder.begin('fusion', 'reciprocal-rank-fusion', { documents: lists.flatMap((list) => list.documents) }, signal);
      const fused = reciprocalRankFusion(lists);
      documents = fused.documents;
      const detail: Record<string, unknown> = { lists: lists.length, k: 60, contributions: Object.fromEntries([...fused.contributions].slice(0, 20)) };
      if (mode === 'hybrid') {
        // Every fused document's score in each list it came from, on that list's own scale (cosine, BM25).
        detail.weights = weights;
        detail.originalScores = Object.fromEntries(
          documents.map((document) => [document.id, Object.fromEntries(fused.contributions.get(document.id)!.map((entry) => [entry.list, entry.score]))]),
        );
      }
      yield stage.end({ documents, detail });
    } else {
      documents = lists[0]?.documents.slice() ?? [];
    }

    const dedupeStage = recorder.begin('dedupe', 'dedupe', { documents }, signal);
    const deduplicated = deduplicate(documents);
    for (const removed of deduplicated.removed) {
      if (removed.reason === 'duplicate-content') dedupeStage.drop(removed.id, `same content as ${removed.keptId}`);
    }
    documents = deduplicated.documents;
    yield dedupeStage.end({ documents });

    for (const postProcessor of postProcessors) {
      const stage = recorder.begin('post-process', postProcessor.name, { documents }, signal);
      const output = await postProcessor.process(question, documents.slice(), stage.context);
      throwIfAborted(signal, postProcessor.name);
      documents = validateProcessorOutput(output, postProcessor.name);
      yield stage.end({ documents });
    }

    // Checked again before inclusion: the filter cannot judge freshness or malformed metadata, and a store or a
    // post-processor may not have honoured it.
    const omitted: OmittedRef[] = [];
    const eligibility = recorder.begin('eligibility', 'eligibility', { documents }, signal);
    const eligible: Document[] = [];
    let redacted = 0;
    for (const document of documents) {
      const decision = checkEligibility(document, options.caller ?? {}, policy);
      if (decision.eligible) {
        if (decision.document !== document) redacted++;
        eligible.push(decision.document);
      } else {
        omitted.push({ ref: document.id, reason: decision.reason, detail: decision.detail, sourceName: document.sourceName });
        eligibility.drop(document.id, `${decision.reason}: ${decision.detail}`);
      }
    }
    const superseded = findSuperseded(eligible);
    for (const [id, by] of superseded) {
      const document = eligible.find((item) => item.id === id)!;
      omitted.push({ ref: id, reason: 'stale', detail: `superseded by ${by}`, sourceName: document.sourceName });
      eligibility.drop(id, `stale: superseded by ${by}`);
    }
    const kept = eligible.filter((document) => !superseded.has(document.id));
    // The stage is recorded when eligibility had a say; a run without a caller over plain documents traces as before.
    if (options.caller !== undefined || omitted.length > 0 || redacted > 0) {
      yield eligibility.end({ documents: kept, detail: { caller: options.caller !== undefined, refused: omitted.length, redacted } });
    }
    documents = kept;
    const result: RetrievalResult = { documents, queries, searchMode: mode, trace: recorder.trace, omitted, retrieved: [...retrieved.values()] };
    if (filter !== undefined) result.filter = filter;
    return { result, recorder, signal };
  }
}

function missingDescription(question: string, omitted: OmittedRef[]): string {
  const counts = new Map<string, number>();
  for (const entry of omitted) counts.set(entry.reason, (counts.get(entry.reason) ?? 0) + 1);
  const left = [...counts].map(([reason, count]) => `${count} ${reason}`).join(', ');
  return `No eligible document above the threshold answers "${question}"${left ? ` (left out: ${left})` : ''}.`;
}

function describeConflict(conflict: EvidenceConflict, byId: Map<string, Evidence>): string {
  const what = conflict.kind === 'versions' ? `which version of ${conflict.key} applies` : `"${conflict.key}"`;
  const claims = conflict.refs.map((id, index) => {
    const item = byId.get(id)!;
    const value = conflict.kind === 'versions' ? `version ${conflict.values[index]}` : JSON.stringify(conflict.values[index]);
    return `${item.document.sourceName || item.document.sourceType} ${conflict.kind === 'model' ? 'says' : 'gives'} ${value} [${item.label}]`;
  });
  return `The sources disagree on ${what}: ${claims.join('; ')}.`;
}

function resolveSearchMode(mode: unknown, store: VectorStore): SearchMode {
  if (!SEARCH_MODES.includes(mode as SearchMode)) {
    throw new AxonError('INVALID_OPTION', `searchMode must be one of ${SEARCH_MODES.map((name) => `"${name}"`).join(', ')}, got ${JSON.stringify(mode)}.`, {
      component: COMPONENT,
      fix: 'Use "vector" (embeddings), "keyword" (BM25) or "hybrid" (both, fused).',
      details: { option: 'searchMode' },
    });
  }
  if (mode !== 'vector' && !supportsKeywordSearch(store)) {
    throw new AxonError('CAPABILITY_MISSING', `searchMode "${mode}" needs a keyword (BM25) index, and this store has none.`, {
      component: store.name,
      fix: 'Use FileStore or MemoryStore (with keywordIndex left on), or searchMode "vector".',
      details: { capability: 'keyword-search' },
    });
  }
  return mode as SearchMode;
}

function resolveHybridWeights(weights: HybridWeights): Required<HybridWeights> {
  const resolved = { vector: weights.vector ?? 1, keyword: weights.keyword ?? 1 };
  for (const [name, weight] of Object.entries(resolved)) {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
      throw new AxonError('INVALID_OPTION', `hybridWeights.${name} must be a finite number ≥ 0, got ${String(weight)}.`, {
        component: COMPONENT,
        fix: 'Use weights such as { vector: 1, keyword: 1 }.',
        details: { option: `hybridWeights.${name}` },
      });
    }
  }
  if (resolved.vector === 0 && resolved.keyword === 0) {
    throw new AxonError('INVALID_OPTION', 'hybridWeights are both 0, so fusion could not rank anything.', {
      component: COMPONENT,
      fix: 'Give at least one retriever a positive weight.',
      details: { option: 'hybridWeights' },
    });
  }
  return resolved;
}

function uniqueQueries(queries: SearchQuery[]): SearchQuery[] {
  const seen = new Set<string>();
  return queries.filter((query) => {
    const key = query.text.trim().toLowerCase().replace(/\s+/g, ' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function validateProcessorOutput(output: unknown, name: string): Document[] {
  if (!Array.isArray(output)) {
    throw new AxonError('INVALID_PROCESSOR_OUTPUT', `Post-processor returned ${output === null ? 'null' : typeof output} instead of an array of documents.`, {
      component: name,
      fix: 'Return the (possibly filtered or reordered) array of documents from process().',
      details: { processor: name },
    });
  }
  output.forEach((document, index) => {
    if (document === null || typeof document !== 'object' || typeof document.id !== 'string' || typeof document.content !== 'string') {
      throw new AxonError('INVALID_PROCESSOR_OUTPUT', `Post-processor returned an invalid document at position ${index}.`, {
        component: name,
        details: { processor: name, position: index },
      });
    }
    if (typeof document.score !== 'number' || !Number.isFinite(document.score)) {
      throw new AxonError(
        'INVALID_PROCESSOR_OUTPUT',
        `Post-processor set the score of "${document.id}" to ${String(document.score)}; scores must be finite numbers.`,
        {
          component: name,
          fix: 'Check the scoring code of this post-processor (a division by zero or a missing field gives NaN).',
          details: { processor: name, position: index, id: document.id },
        },
      );
    }
  });
  return output as Document[];
}
