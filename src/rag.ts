import type { ChatProvider } from './contracts/chat.ts';
import type { EmbeddingsProvider } from './contracts/embeddings.ts';
import { supportsKeywordSearch } from './contracts/keyword-search.ts';
import type { PostProcessor } from './contracts/post-processor.ts';
import type { PreProcessor, SearchQuery } from './contracts/pre-processor.ts';
import type { VectorStore } from './contracts/vector-store.ts';
import { extractiveAnswer } from './answer/extractive.ts';
import { buildAnswerMessages, citationOf, extractCitations, type Evidence } from './context/evidence.ts';
import { normalizeDocument, type Citation, type Document, type DocumentInput, type Vector } from './document.ts';
import { AxonError, IndexEmptyError, throwIfAborted } from './errors.ts';
import { parseFilter } from './filter/parse.ts';
import type { Filter } from './filter/types.ts';
import { deduplicate } from './pipeline/dedupe.ts';
import { reciprocalRankFusion, type RankedList } from './pipeline/fusion.ts';
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
}

export interface AnswerOptions extends RetrieveOptions {
  /**
   * Most characters of evidence given to the model; documents past it are left out, best first kept, and
   * recorded in the trace as `over context budget`. @default 12000
   */
  contextBudgetCharacters?: number;
}

export interface RetrievalResult {
  /** The documents after every post-processor, best first. */
  documents: Document[];
  /** The search queries the pre-processors produced. */
  queries: SearchQuery[];
  /** How the candidates were found. */
  searchMode: SearchMode;
  trace: RunTrace;
}

/** `answered`: the text answers from evidence. `missing_evidence`: nothing retrieved supports an answer. */
export type AnswerStatus = 'answered' | 'missing_evidence';

export interface Answer {
  status: AnswerStatus;
  text: string;
  /** `generated` by the chat model, or `extractive` (quoted sentences) when no chat model is configured. */
  mode: 'generated' | 'extractive';
  citations: Citation[];
  /** The documents given to the model as evidence, in label order (label = index + 1). */
  documents: Document[];
  trace: RunTrace;
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
const DEFAULT_CONTEXT_BUDGET = 12_000;
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
  /** Weights of the vector and keyword lists in hybrid fusion when a call does not say. @default { vector: 1, keyword: 1 } */
  protected hybridWeights(): HybridWeights {
    return { vector: 1, keyword: 1 };
  }
  /** The system instructions given to the chat model, before Axon's evidence rules. */
  protected instructions(): string {
    return 'You are a helpful assistant that answers questions about the user\'s documents accurately and concisely.';
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
      throw new AxonError('INVALID_ARGUMENT', 'sourceType must be a non-empty string.', { component: COMPONENT });
    }
    if (sourceName !== undefined && typeof sourceName !== 'string') {
      throw new AxonError('INVALID_ARGUMENT', 'sourceName must be a string when given.', { component: COMPONENT });
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
    const run = this.runRetrieval(question, options);
    for (;;) {
      const step = await run.next();
      if (step.done) return step.value.result;
    }
  }

  /** Retrieve, then answer with citations (generated, or extractive when no chat model is configured). */
  async answer(question: string, options: AnswerOptions = {}): Promise<Answer> {
    for await (const event of this.stream(question, options)) {
      if (event.type === 'result') return event.answer;
    }
    throw new AxonError('INVALID_ARGUMENT', 'The run ended without a result.', { component: COMPONENT });
  }

  /** Like `answer`, as events: each stage record when it finishes, answer text deltas, then the result. */
  async *stream(question: string, options: AnswerOptions = {}): AsyncGenerator<RagEvent, void, undefined> {
    const contextBudget = options.contextBudgetCharacters ?? DEFAULT_CONTEXT_BUDGET;
    if (!Number.isInteger(contextBudget) || contextBudget <= 0) {
      throw new AxonError('INVALID_ARGUMENT', `contextBudgetCharacters must be a positive integer, got ${String(contextBudget)}.`, { component: COMPONENT });
    }
    const run = this.runRetrieval(question, options);
    let step = await run.next();
    while (!step.done) {
      yield { type: 'stage', record: step.value };
      step = await run.next();
    }
    const { result, recorder, signal } = step.value;
    const { chat } = this.components();

    const assembly = recorder.begin('context', 'evidence', { documents: result.documents }, signal);
    const evidence: Evidence[] = [];
    let used = 0;
    for (const document of result.documents) {
      if (evidence.length > 0 && used + document.content.length > contextBudget) {
        assembly.drop(document.id, `over context budget (${contextBudget} characters)`);
        continue;
      }
      used += document.content.length;
      evidence.push({ label: evidence.length + 1, document });
    }
    yield { type: 'stage', record: assembly.end({ documents: evidence.map((item) => item.document), detail: { characters: used, budget: contextBudget } }) };

    const generation = recorder.begin('generate', chat?.name ?? 'extractive-answer', { documents: evidence.map((item) => item.document) }, signal);
    let answer: Answer;
    if (evidence.length === 0) {
      generation.warn('No documents survived retrieval; answered without evidence.');
      answer = this.makeAnswer('missing_evidence', NO_EVIDENCE_TEXT, chat ? 'generated' : 'extractive', [], [], recorder.trace);
    } else if (chat === undefined) {
      const extract = extractiveAnswer(result.trace.question, evidence);
      if (extract.text === '') {
        generation.warn('No sentence of the evidence shares a word with the question.');
        answer = this.makeAnswer('missing_evidence', NO_EVIDENCE_TEXT, 'extractive', [], evidence, recorder.trace);
      } else {
        yield { type: 'delta', text: extract.text };
        const citations = [...new Set(extract.labels)].map((label) => citationOf(evidence[label - 1]));
        answer = this.makeAnswer('answered', extract.text, 'extractive', citations, evidence, recorder.trace);
      }
    } else {
      const messages = buildAnswerMessages(this.instructions(), result.trace.question, evidence);
      let text = '';
      for await (const delta of chat.stream(messages, { signal })) {
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
      answer = this.makeAnswer('answered', text, 'generated', citations, evidence, recorder.trace);
    }
    yield { type: 'stage', record: generation.end({ documents: evidence.map((item) => item.document), detail: { cited: answer.citations.map((citation) => citation.label) } }) };
    yield { type: 'result', answer };
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

  private makeAnswer(status: AnswerStatus, text: string, mode: Answer['mode'], citations: Citation[], evidence: Evidence[], trace: RunTrace): Answer {
    return { status, text, mode, citations, documents: evidence.map((item) => item.document), trace };
  }

  private async prepareDocuments(inputs: DocumentInput[], options: AddDocumentsOptions): Promise<Document[]> {
    if (!Array.isArray(inputs)) {
      throw new AxonError('INVALID_ARGUMENT', `documents must be an array, got ${inputs === null ? 'null' : typeof inputs}.`, { component: COMPONENT });
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
      const vectors = await embedAll(embeddings, missing.map((document) => document.content), { inputType: 'document', signal: options.signal, onProgress: options.onProgress });
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
  ): AsyncGenerator<StageRecord, { result: RetrievalResult; recorder: TraceRecorder; signal: AbortSignal }, undefined> {
    if (typeof question !== 'string' || question.trim() === '') {
      throw new AxonError('INVALID_QUESTION', `The question must be a non-empty string, got ${question === '' ? 'an empty string' : typeof question === 'string' ? 'only whitespace' : typeof question}.`, {
        component: COMPONENT,
        fix: 'Pass the user\'s question as text.',
      });
    }
    const { topK } = options;
    if (topK !== undefined && (typeof topK !== 'number' || !Number.isInteger(topK) || topK <= 0)) {
      throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, { component: COMPONENT, fix: 'Use a whole number of at least 1, e.g. 50.' });
    }
    if (options.filter !== undefined) parseFilter(options.filter, COMPONENT);
    const signal = options.signal ?? new AbortController().signal;
    throwIfAborted(signal, COMPONENT);

    const { embeddings, store, preProcessors, postProcessors } = this.components();
    const mode = resolveSearchMode(options.searchMode ?? this.searchMode(), store);
    const weights = resolveHybridWeights({ ...this.hybridWeights(), ...options.hybridWeights });
    const recorder = new TraceRecorder(question, options.runId);

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
      vectors = await embedAll(embeddings, queries.map((query) => query.text), { inputType: 'query', signal });
      yield embedStage.end({ detail: { dimensions: vectors[0]?.length } });
    }

    const lists: RankedList[] = [];
    const searchDetail = { topK: topK ?? store.topK, filtered: options.filter !== undefined };
    for (let index = 0; index < queries.length; index++) {
      const prefix = queries.length > 1 ? `query ${index + 1}` : '';
      if (mode !== 'keyword') {
        const stage = recorder.begin('search', mode === 'hybrid' ? `${store.name}:vector` : store.name, { queries: [queries[index].text] }, signal);
        const found = await store.search(vectors[index], { topK, filter: options.filter, ef: options.ef, exact: options.exact, signal });
        lists.push({ name: mode === 'hybrid' ? `${prefix} vector`.trim() : prefix || 'vector', documents: found, weight: mode === 'hybrid' ? weights.vector : 1 });
        const method = await store.searchMethod?.({ filter: options.filter, exact: options.exact });
        yield stage.end({ documents: found, detail: { ...searchDetail, retriever: 'vector', scale: 'cosine', ...(method ? { method } : {}), ...(method === 'ann' && options.ef !== undefined ? { ef: options.ef } : {}) } });
      }
      if (mode !== 'vector' && supportsKeywordSearch(store)) {
        const stage = recorder.begin('search', `${store.name}:keyword`, { queries: [queries[index].text] }, signal);
        const found = await store.keywordSearch(queries[index].text, { topK, filter: options.filter, signal });
        lists.push({ name: mode === 'hybrid' ? `${prefix} keyword`.trim() : prefix || 'keyword', documents: found, weight: mode === 'hybrid' ? weights.keyword : 1 });
        yield stage.end({ documents: found, detail: { ...searchDetail, retriever: 'keyword', scale: 'bm25' } });
      }
    }
    if (lists.every((list) => list.documents.length === 0) && options.filter === undefined && (await store.count({ signal })) === 0) {
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
        detail.originalScores = Object.fromEntries(documents.map((document) => [document.id, Object.fromEntries(fused.contributions.get(document.id)!.map((entry) => [entry.list, entry.score]))]));
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
    return { result: { documents, queries, searchMode: mode, trace: recorder.trace }, recorder, signal };
  }
}

function resolveSearchMode(mode: unknown, store: VectorStore): SearchMode {
  if (!SEARCH_MODES.includes(mode as SearchMode)) {
    throw new AxonError('INVALID_ARGUMENT', `searchMode must be one of ${SEARCH_MODES.map((name) => `"${name}"`).join(', ')}, got ${JSON.stringify(mode)}.`, {
      component: COMPONENT,
      fix: 'Use "vector" (embeddings), "keyword" (BM25) or "hybrid" (both, fused).',
    });
  }
  if (mode !== 'vector' && !supportsKeywordSearch(store)) {
    throw new AxonError('INVALID_ARGUMENT', `searchMode "${mode}" needs a keyword (BM25) index, and this store has none.`, {
      component: store.name,
      fix: 'Use FileStore or MemoryStore (with keywordIndex left on), or searchMode "vector".',
    });
  }
  return mode as SearchMode;
}

function resolveHybridWeights(weights: HybridWeights): Required<HybridWeights> {
  const resolved = { vector: weights.vector ?? 1, keyword: weights.keyword ?? 1 };
  for (const [name, weight] of Object.entries(resolved)) {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
      throw new AxonError('INVALID_ARGUMENT', `hybridWeights.${name} must be a finite number ≥ 0, got ${String(weight)}.`, { component: COMPONENT, fix: 'Use weights such as { vector: 1, keyword: 1 }.' });
    }
  }
  if (resolved.vector === 0 && resolved.keyword === 0) {
    throw new AxonError('INVALID_ARGUMENT', 'hybridWeights are both 0, so fusion could not rank anything.', { component: COMPONENT, fix: 'Give at least one retriever a positive weight.' });
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
    throw new AxonError('INVALID_ARGUMENT', `Post-processor returned ${output === null ? 'null' : typeof output} instead of an array of documents.`, {
      component: name,
      fix: 'Return the (possibly filtered or reordered) array of documents from process().',
    });
  }
  output.forEach((document, index) => {
    if (document === null || typeof document !== 'object' || typeof document.id !== 'string' || typeof document.content !== 'string') {
      throw new AxonError('INVALID_ARGUMENT', `Post-processor returned an invalid document at position ${index}.`, { component: name });
    }
    if (typeof document.score !== 'number' || !Number.isFinite(document.score)) {
      throw new AxonError('INVALID_ARGUMENT', `Post-processor set the score of "${document.id}" to ${String(document.score)}; scores must be finite numbers.`, {
        component: name,
        fix: 'Check the scoring code of this post-processor (a division by zero or a missing field gives NaN).',
      });
    }
  });
  return output as Document[];
}
