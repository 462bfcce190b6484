import type { ChatHistory, ConversationMessage } from './contracts/chat-history.ts';
import type { ChatProvider } from './contracts/chat.ts';
import type { EmbeddingsProvider } from './contracts/embeddings.ts';
import { supportsKeywordSearch } from './contracts/keyword-search.ts';
import type { PostProcessor } from './contracts/post-processor.ts';
import type { PreProcessor } from './contracts/pre-processor.ts';
import type { VectorStore } from './contracts/vector-store.ts';
import { ContextBuilder, DATA_RULES } from './context/builder.ts';
import { CONFLICT_CHECK_PROMPT_VERSION } from './context/contract.ts';
import { eligibilityFilter, type EligibilityPolicy } from './context/eligibility.ts';
import { EVIDENCE_RULES } from './context/evidence.ts';
import type { ContextPacket } from './context/packet.ts';
import { assertQuestionFits } from './context/question-size.ts';
import { stableHash, storedCaller, type PipelineVersion, type StoredTrace, type TraceStore } from './context/trace-store.ts';
import { normalizeDocument, type Document, type DocumentInput } from './document.ts';
import { AxonError, throwIfAborted } from './errors.ts';
import { parseFilter } from './filter/parse.ts';
import { retrievalDefaultsFor } from './pipeline/retrieval-defaults.ts';
import { finalEvent, runStages, runStagesToEnd } from './pipeline/runner.ts';
import { resolveHybridWeights, resolveSearchMode, type HybridWeights, type SearchMode } from './pipeline/search-mode.ts';
import { prepareTelemetry } from './pipeline/telemetry.ts';
import { TraceRecorder } from './pipeline/trace.ts';
import type { PriceTable } from './pipeline/usage.ts';
import { assertVector, embedAll } from './runtime/embed.ts';
import { parseOptions } from './runtime/options.ts';
import { MemoryChatHistory } from './conversation/memory-chat-history.ts';
import { checkConversationOptions } from './stages/condense-stage.ts';
import {
  Conversation,
  splitMessages,
  withSearchedQuestion,
  type ConversationAnswer,
  type ConversationEvent,
  type ConversationSettings,
} from './stages/conversation.ts';
import { defaultAnswerStages, defaultRetrievalStages } from './stages/default-stages.ts';
import { searchQueries, type AnswerPlan, type RagRunState, type RagStage } from './stages/state.ts';
import type {
  AddDocumentsOptions,
  Answer,
  AnswerOptions,
  ConflictCheck,
  ContextOptions,
  RagComponents,
  RagEvent,
  RetrievalResult,
  RetrieveOptions,
} from './stages/types.ts';

export { SEARCH_MODES, type HybridWeights, type SearchMode } from './pipeline/search-mode.ts';
export type { ContextGuardrailCheck, Guardrail, GuardrailCheck, GuardrailDecision, GuardrailVerdict, StopReason } from './context/outcome.ts';
export type { AnswerPlan, RagRunState, RagStage, RagStageEvent, SearchPlan } from './stages/state.ts';
export { Conversation, type ConversationAnswer, type ConversationEvent, type ConversationRunner, type ConversationSettings } from './stages/conversation.ts';
export type {
  ConversationOptions,
  AddDocumentsOptions,
  Answer,
  AnswerOptions,
  AnswerStatus,
  ConflictCheck,
  ContextOptions,
  RagComponents,
  RagEvent,
  RetrievalResult,
  RetrieveOptions,
} from './stages/types.ts';

const COMPONENT = 'rag';

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
  private stages: { retrieval: RagStage[]; answer: RagStage[] } | undefined;
  private histories: { history: ChatHistory | undefined } | undefined;
  private pricesChecked: { given: PriceTable; checked: PriceTable } | undefined;

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
   * Where `conversation()` keeps turns when it is not given a history: a `FileChatHistory` beside a file store, a
   * `PostgresChatHistory` beside pgvector, your own. Asked for once, like the parts.
   * @default undefined (each pipeline keeps its conversations in memory, a `MemoryChatHistory` of its own)
   */
  protected chatHistory(): ChatHistory | undefined {
    return undefined;
  }
  /**
   * What provider usage costs, by `"<provider>/<model>"` (see `PriceTable`): each run's `usage` then has a `cost`.
   * A model missing from the table has none. Checked on the first run. @default undefined (no costs)
   */
  protected prices(): PriceTable | undefined {
    return undefined;
  }

  /**
   * The stages of retrieval (`retrieve`, and the first part of `answer` and `stream`), in order. Receives the
   * default list (each pre-processor, embed, search, fusion, dedupe, each post-processor, eligibility) and returns
   * the list to run: override it to add, remove or reorder stages without touching the runner. A stage reads
   * and writes the run's `RagRunState`; one placed before pre-processing may rewrite `searchQuestion` (a
   * conversation's condense step), which the queries start from. Asked for once, like the parts.
   *
   * @example
   * protected retrievalStages(stages: RagStage[]): RagStage[] {
   *   return insertStage(stages, { before: 'pre-process' }, condense);
   * }
   */
  protected retrievalStages(stages: RagStage[]): RagStage[] {
    return stages;
  }
  /**
   * The stages of an answer after retrieval (`answer`, `stream`), in order. Receives the default list (context,
   * generate) and returns the list to run. A stage after `context` sees the documents, the packet and the
   * evidence (`state.packet`, `state.evidence`); one after `generate` sees `state.answer`. Asked for once.
   */
  protected answerStages(stages: RagStage[]): RagStage[] {
    return stages;
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
      throw new AxonError('INVALID_INPUT', 'sourceType must be a non-empty string.', {
        component: COMPONENT,
        fix: "Pass the source type the documents were added with, e.g. deleteBySource('file', 'docs/a.md').",
        details: { argument: 'sourceType' },
      });
    }
    if (sourceName !== undefined && typeof sourceName !== 'string') {
      throw new AxonError('INVALID_INPUT', 'sourceName must be a string when given.', {
        component: COMPONENT,
        fix: 'Pass the source name as a string, or leave it out to delete every source of the type.',
        details: { argument: 'sourceName' },
      });
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
    const run = await this.startRun(question, options, undefined);
    try {
      const state = await runStagesToEnd(this.stageLists().retrieval, run.state, run.recorder, run.state.signal);
      run.recorder.finish({ 'axon.status': 'retrieved', 'axon.document_count': state.documents.length });
      return retrievalResult(state, run.recorder);
    } catch (error) {
      run.recorder.fail(error);
      throw error;
    }
  }

  /** Retrieve, then answer with citations (generated, or extractive when no chat model is configured). */
  async answer(question: string, options: AnswerOptions = {}): Promise<Answer> {
    return finalEvent(this.stream(question, options), (event) => (event.type === 'result' ? event.answer : undefined), COMPONENT, 'stream-ends-with-result');
  }

  /** Like `answer`, as events: each stage record when it finishes, answer text deltas, then the result. */
  async *stream(question: string, options: AnswerOptions = {}): AsyncGenerator<RagEvent, void, undefined> {
    const settings = await this.checkAnswerable(question, options);
    if (options.guardrail !== undefined && typeof options.guardrail !== 'function') {
      throw new AxonError('INVALID_OPTION', `guardrail must be a function, got ${typeof options.guardrail}.`, {
        component: COMPONENT,
        fix: 'Pass guardrail as a function of { question, caller, packet } returning a reason to refuse, or undefined to go on.',
        details: { option: 'guardrail' },
      });
    }
    if (options.conflictCheck !== undefined && options.conflictCheck !== 'metadata' && options.conflictCheck !== 'model') {
      const given = JSON.stringify(options.conflictCheck);
      throw new AxonError('INVALID_OPTION', `conflictCheck must be "metadata" or "model", got ${given}.`, {
        component: COMPONENT,
        fix: "Leave conflictCheck out (it is 'metadata'), or pass 'model' to have the chat model compare the evidence too.",
        details: { option: 'conflictCheck' },
      });
    }
    const answering: AnswerPlan = {
      context: settings,
      instructions: this.instructions(),
      guardrail: options.guardrail,
      conflictCheck: options.conflictCheck ?? this.conflictCheck(),
    };
    const { state, recorder } = await this.startRun(question, options, answering);
    try {
      const { retrieval, answer: answerStages } = this.stageLists();
      const final = yield* runStages([...retrieval, ...answerStages], state, recorder, state.signal);
      const answer = final.answer;
      if (answer !== undefined) answer.searchedQuestion = final.searchQuestion;
      if (answer === undefined) {
        throw new AxonError('INTERNAL', 'The answer stages ended without an answer.', {
          component: COMPONENT,
          fix: 'Keep a generate stage in answerStages(), or set state.answer in a stage of your own.',
          details: { invariant: 'answer-stages-answer' },
        });
      }
      answer.usage = recorder.usageSummary();
      const store = options.traceStore ?? this.traceStore();
      if (store) await store.save(this.storedTrace(answer, retrievalResult(final, recorder), options));
      recorder.finish({
        'axon.status': answer.status,
        'axon.evidence_count': answer.evidenceRefs.length,
        'axon.citation_count': answer.citations.length,
        'axon.omitted_count': answer.omitted.length,
      });
      yield { type: 'result', answer };
    } catch (error) {
      recorder.fail(error);
      throw error;
    } finally {
      // A consumer that stops reading early still closes the run's span.
      recorder.finish({ 'axon.abandoned': true });
    }
  }

  /**
   * A conversation: each question answered with the turns before it (a follow-up rewritten to stand alone before
   * retrieval, the history in the packet as its own section) and recorded as a turn in `history`. Give the `id` of
   * an earlier conversation to continue it; without one a new conversation starts (docs/conversations.md).
   *
   * @throws AxonError `INVALID_INPUT` for an id that is not 1 to 128 letters, digits, `_` and `-`
   */
  conversation(settings: ConversationSettings = {}): Conversation {
    const { history, ...rest } = settings;
    return new Conversation(this, history ?? this.defaultChatHistory(), rest);
  }

  /**
   * Answer the last of `messages` (the user's question) with the messages before it as the conversation, as chat
   * APIs and Bedrock's `messages` take it: the follow-up is rewritten to stand alone before retrieval and the
   * earlier messages enter the packet as its conversation section. Nothing is recorded; use `conversation()` to
   * keep turns.
   *
   * @throws AxonError `INVALID_INPUT` when `messages` is empty, holds something other than user and assistant
   *   messages, or does not end with the user's question
   */
  async converse(messages: ConversationMessage[], options: AnswerOptions = {}): Promise<ConversationAnswer> {
    const result = (event: ConversationEvent) => (event.type === 'result' ? event.answer : undefined);
    return finalEvent(this.converseStream(messages, options), result, COMPONENT, 'converse-ends-with-result');
  }

  /** Like `converse`, as events: each stage record, answer text deltas, then the result. */
  async *converseStream(messages: ConversationMessage[], options: AnswerOptions = {}): AsyncGenerator<ConversationEvent, void, undefined> {
    const { question, history } = splitMessages(messages, COMPONENT);
    for await (const event of this.stream(question, { ...options, conversation: { ...options.conversation, history } })) {
      yield event.type === 'result' ? { type: 'result', answer: withSearchedQuestion(event.answer, question) } : event;
    }
  }

  /**
   * Check a question before any work, as `answer` and `stream` do first: a question that is no text, or one too
   * long for the context budget (this pipeline's `contextOptions()` and `options.context`), is refused before
   * retrieval. A server can call it to answer such a request with a client error.
   *
   * @throws AxonError `INVALID_QUESTION`; `QUESTION_TOO_LONG` (the message names the limit in tokens);
   *   `CONFIG_INVALID` or `INVALID_OPTION` for context options that do not fit together
   */
  async checkQuestion(question: string, options: Pick<AnswerOptions, 'context'> = {}): Promise<void> {
    await this.checkAnswerable(question, options);
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
   * its snapshot). The pipeline can be used again afterwards; the store reloads on demand. The chat history is
   * not closed (a `PostgresChatHistory` cannot be used after `close()`): close it yourself when you are done.
   */
  async close(): Promise<void> {
    if (this.resolved) await this.resolved.store.close?.();
  }

  // --- Internal helpers ---

  /** The pipeline's `chatHistory()`, asked for once, or a history in memory of its own. */
  private defaultChatHistory(): ChatHistory {
    this.histories ??= { history: this.chatHistory() };
    this.histories.history ??= new MemoryChatHistory();
    return this.histories.history;
  }

  /** The run's context settings, once the question is known to fit them. */
  private async checkAnswerable(question: string, options: Pick<AnswerOptions, 'context'>): Promise<ContextOptions> {
    // The schema's module (and zod) load with the first answer, not with the core.
    const { contextOptionsSchema } = await import('./context/options.ts');
    const settings: ContextOptions = parseOptions(contextOptionsSchema, { ...this.contextOptions(), ...options.context }, 'context');
    // Built once here only to reject budget options that do not fit together before any work is done.
    new ContextBuilder(settings);
    assertQuestionText(question);
    assertQuestionFits(question, settings, this.instructions());
    return settings;
  }

  private stageLists(): { retrieval: RagStage[]; answer: RagStage[] } {
    const parts = this.components();
    this.stages ??= {
      retrieval: this.retrievalStages(defaultRetrievalStages(parts)),
      answer: this.answerStages(defaultAnswerStages(parts)),
    };
    return this.stages;
  }

  /** Check the question and options, resolve the search, and open the run's trace: the state of the first stage. */
  private async startRun(
    question: string,
    options: RetrieveOptions,
    answering: AnswerPlan | undefined,
  ): Promise<{ state: RagRunState; recorder: TraceRecorder }> {
    assertQuestionText(question);
    const { topK } = options;
    if (topK !== undefined && (typeof topK !== 'number' || !Number.isInteger(topK) || topK <= 0)) {
      throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
        component: COMPONENT,
        fix: 'Use a whole number of at least 1, e.g. 50.',
        details: { topK },
      });
    }
    if (options.filter !== undefined) parseFilter(options.filter, COMPONENT);
    const history = checkConversationOptions(options.conversation, COMPONENT);
    const policy = this.eligibilityPolicy();
    const callerFilter = options.caller === undefined ? undefined : eligibilityFilter(options.caller, policy);
    const filter = callerFilter === undefined ? options.filter : options.filter === undefined ? callerFilter : { $and: [options.filter, callerFilter] };
    const signal = options.signal ?? new AbortController().signal;
    throwIfAborted(signal, COMPONENT);

    const parts = this.components();
    const mode = resolveSearchMode(options.searchMode ?? this.searchMode(), parts.store);
    const weights = resolveHybridWeights({ ...this.hybridWeights(), ...options.hybridWeights });
    await prepareTelemetry();
    const recorder = new TraceRecorder(question, options.runId, { prices: await this.checkedPrices() });
    const state: RagRunState = {
      question,
      trace: recorder.trace,
      searchQuestion: question,
      signal,
      parts,
      search: { mode, weights, topK, filter, eligibilityFiltered: callerFilter !== undefined, ef: options.ef, exact: options.exact },
      caller: options.caller,
      policy,
      answering,
      ...(history ? { history } : {}),
      queries: [],
      vectors: [],
      lists: [],
      retrieved: new Map(),
      documents: [],
      omitted: [],
    };
    return { state, recorder };
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
    if (answer.usage) stored.usage = answer.usage;
    return stored;
  }

  /** `prices()`, checked against its schema (loaded, with zod, only when there are prices); checked once per table. */
  private async checkedPrices(): Promise<PriceTable | undefined> {
    const prices = this.prices();
    if (prices === undefined) return undefined;
    if (this.pricesChecked?.given !== prices) {
      const { priceTableSchema } = await import('./pipeline/price-table.ts');
      this.pricesChecked = { given: prices, checked: parseOptions(priceTableSchema, prices, 'prices') };
    }
    return this.pricesChecked.checked;
  }

  private async prepareDocuments(inputs: DocumentInput[], options: AddDocumentsOptions): Promise<Document[]> {
    if (!Array.isArray(inputs)) {
      throw new AxonError('INVALID_INPUT', `documents must be an array, got ${inputs === null ? 'null' : typeof inputs}.`, {
        component: COMPONENT,
        fix: 'Pass an array: addDocuments([{ content, sourceType?, sourceName?, metadata? }]).',
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
          details: { id: document.id },
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
}

function assertQuestionText(question: unknown): asserts question is string {
  if (typeof question !== 'string' || question.trim() === '') {
    throw new AxonError(
      'INVALID_QUESTION',
      `The question must be a non-empty string, got ${question === '' ? 'an empty string' : typeof question === 'string' ? 'only whitespace' : typeof question}.`,
      {
        component: COMPONENT,
        fix: "Pass the user's question as text.",
        details: { argument: 'question' },
      },
    );
  }
}

/** What `retrieve` returns, from the state retrieval left. */
function retrievalResult(state: RagRunState, recorder: TraceRecorder): RetrievalResult {
  const { documents, search, trace, omitted, retrieved } = state;
  const result: RetrievalResult = {
    documents,
    queries: searchQueries(state),
    searchedQuestion: state.searchQuestion,
    searchMode: search.mode,
    trace,
    omitted,
    retrieved: [...retrieved.values()],
    usage: recorder.usageSummary(),
  };
  if (search.filter !== undefined) result.filter = search.filter;
  return result;
}
