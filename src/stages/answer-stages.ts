import { describeUncovered } from '../answer/coverage.ts';
import { extractiveAnswer } from '../answer/extractive.ts';
import { ContextBuilder } from '../context/builder.ts';
import { judgeModelAnswer } from '../answer/model-answer.ts';
import { detectConflicts, detectConflictsWithModel, uncitedSentences, type EvidenceConflict } from '../context/contract.ts';
import { citationOf, extractCitations, type Evidence } from '../context/evidence.ts';
import { guardrailVerdict, noEvidenceAnswer } from '../context/outcome.ts';
import { renderMessages, type OmittedRef } from '../context/packet.ts';
import type { ChatFinish, ChatProvider } from '../contracts/chat.ts';
import { AxonError, throwIfAborted } from '../errors.ts';
import type { Stage, StageOutcome, StageStep } from '../pipeline/stage.ts';
import type { RagRunState, RagStageEvent } from './state.ts';
import type { Answer } from './types.ts';

// The answer side of a run: the context packet, then `generate`, whose steps (guardrail, conflict check, the
// answer itself, its citations) share one trace record, as the trace has always shown them.

/** One step of a stage that shares the stage's record: the state in, the state out, as a stage's `run`. */
export type StageStepFunction<State, Event = never> = (state: State, step: StageStep) => StageOutcome<State, Event>;

/** Assemble the context packet: instructions, policies, the request, the plan's sections, the conversation, the evidence, the omissions. */
export function contextStage(): Stage<RagRunState> {
  return {
    kind: 'context',
    name: 'evidence',
    input: (state) => ({ documents: state.documents }),
    run(state, step) {
      const settings = answering(state).context;
      // The packet's run id is the trace's, so a stored packet and trace always belong together.
      const builder = new ContextBuilder({ ...settings, runId: step.context.runId });
      builder.systemInstruction(answering(state).instructions);
      for (const policy of settings.policies ?? []) builder.policy(policy);
      builder.userRequest(state.question);
      if (settings.goal) builder.workingMemory(settings.goal);
      for (const tool of settings.toolResults ?? []) builder.toolResult(tool);
      for (const memory of settings.memories ?? []) builder.memory(memory);
      for (const example of settings.examples ?? []) builder.example(example);
      for (const exclusion of settings.exclusions ?? []) builder.exclusion(exclusion);
      if (state.conversation !== undefined) builder.conversation(state.conversation);
      for (const omitted of state.omitted) builder.omit(omitted.ref, omitted.reason, omitted.detail, omitted.sourceName);
      builder.evidence(state.documents);
      const { packet, evidence } = builder.assemble();
      const given = new Set(evidence.map((item) => item.document.id));
      for (const omitted of packet.omitted) {
        if (!state.documents.some((document) => document.id === omitted.ref) || given.has(omitted.ref)) continue;
        step.drop(omitted.ref, `${omitted.reason}${omitted.detail ? `: ${omitted.detail}` : ''}`);
      }
      for (const degradation of packet.degradations) step.warn(`${degradation.kind}: ${degradation.detail}`);
      const sections: Record<string, number> = {};
      for (const section of packet.sections) sections[section.kind] = (sections[section.kind] ?? 0) + 1;
      step.detail({ packetId: packet.packetId, budget: packet.budget, tokenizer: packet.tokenizer, sections });
      state.packet = packet;
      state.evidence = evidence;
      return state;
    },
    output: (state) => ({ documents: evidenceDocuments(state) }),
  };
}

/**
 * Write the answer with `chat` (extractive without one): the guardrail, the conflict check, the answer and its
 * citations run in order and share the stage's one record (`generate`, named after the chat model).
 */
export function generateStage(chat: ChatProvider | undefined): Stage<RagRunState, RagStageEvent> {
  const steps: StageStepFunction<RagRunState, RagStageEvent>[] = [guardrailStep, conflictStep, respondStep, citeStep];
  return {
    kind: 'generate',
    name: chat?.name ?? 'extractive-answer',
    input: (state) => ({ documents: evidenceDocuments(state) }),
    async *run(state, step) {
      let current = state;
      for (const run of steps) {
        const outcome = run(current, step);
        current = isGenerator(outcome) ? yield* outcome : await outcome;
      }
      const answer = current.answer;
      if (answer !== undefined) step.detail({ status: answer.status, cited: answer.citations.map((citation) => citation.label) });
      return current;
    },
    output: (state) => ({ documents: evidenceDocuments(state) }),
  };
}

/** The guardrail, on the packet before the model is called: a refusal is kept in `state.refusal`. */
export async function guardrailStep(state: RagRunState, step: StageStep): Promise<RagRunState> {
  const guardrail = answering(state).guardrail;
  if (guardrail === undefined) return state;
  const decision = await guardrail({
    stage: 'context',
    text: state.question,
    question: state.question,
    caller: state.caller,
    packet: packetOf(state),
    signal: step.signal,
  });
  const { verdict } = guardrailVerdict(decision);
  if (verdict.action === 'block') state.refusal = verdict.reason;
  return state;
}

/** Conflicting evidence, from metadata, or also from the model (`conflictCheck: 'model'`) when metadata shows none. */
export async function conflictStep(state: RagRunState, step: StageStep): Promise<RagRunState> {
  const evidence = state.evidence ?? [];
  const chat = state.parts.chat;
  let conflicts = detectConflicts(
    evidence.map((item) => item.document),
    state.searchQuestion,
  );
  const modelCheck = answering(state).conflictCheck === 'model' && chat !== undefined && conflicts.length === 0;
  if (modelCheck && state.refusal === undefined && !budgetRefusal(state) && evidence.length >= 2) {
    const check = await detectConflictsWithModel(step.context.usage?.chat(chat) ?? chat, state.searchQuestion, evidence, step.signal);
    if (check.invalidReply !== undefined) {
      step.warn(`The conflict check's reply did not fit its schema; treated as no conflict: ${JSON.stringify(check.invalidReply)}`);
    }
    if (check.conflict) conflicts = [check.conflict];
  }
  state.conflicts = conflicts;
  return state;
}

/**
 * The answer: a refusal (guardrail, budget), the no-evidence answer, the conflict described, an extractive
 * answer without a chat model, or the model's, streamed as `delta` events.
 */
export async function* respondStep(state: RagRunState, step: StageStep): AsyncGenerator<RagStageEvent, RagRunState, undefined> {
  const chat = state.parts.chat === undefined ? undefined : (step.context.usage?.chat(state.parts.chat) ?? state.parts.chat);
  const evidence = state.evidence ?? [];
  const packet = packetOf(state);
  const mode: Answer['mode'] = chat ? 'generated' : 'extractive';
  const base = { evidence, packet, omitted: packet.omitted, trace: state.trace };
  const degradation = budgetRefusal(state);
  const conflicts = state.conflicts ?? [];
  if (state.refusal !== undefined) {
    step.warn(`Refused by the guardrail: ${state.refusal}`);
    const text = `I cannot answer this: ${state.refusal}`;
    state.answer = makeAnswer({ ...base, status: 'refused', text, mode, citations: [], stopReason: 'guardrail', refusal: state.refusal });
  } else if (degradation) {
    step.warn(degradation.detail);
    const texts = {
      refusal: 'I cannot answer this: the instructions and the question alone exceed the context budget.',
      escalation: 'I cannot answer this reliably: the policy requires complete evidence, and not all of it fits the context budget.',
      clarifying_question:
        `Your question matches more documents than I can take into account at once. ${degradation.detail} ` +
        'Could you narrow it down, for example to one product, period or document?',
    };
    const stops = { refusal: 'budget', escalation: 'escalation', clarifying_question: 'clarifying_question' } as const;
    const kind = degradation.kind as keyof typeof texts;
    state.answer = makeAnswer({ ...base, status: 'refused', text: texts[kind], mode, citations: [], stopReason: stops[kind], refusal: degradation.detail });
  } else if (evidence.length === 0) {
    step.warn('No eligible evidence survived retrieval; the model was not called.');
    const missingEvidence = [missingDescription(state.question, packet.omitted)];
    const { status, text, citations } = noEvidenceAnswer(withheldByEligibility(state.omitted));
    state.answer = makeAnswer({ ...base, status, text, mode, citations, stopReason: 'no_eligible_evidence', missingEvidence });
  } else if (conflicts.length > 0) {
    step.warn(`The evidence disagrees (${conflicts.map((conflict) => conflict.key).join(', ')}); the model was not called.`);
    const byId = new Map(evidence.map((item) => [item.document.id, item]));
    const cited = [...new Set(conflicts.flatMap((conflict) => conflict.refs))].map((id) => citationOf(byId.get(id)!));
    const text = conflicts.map((conflict) => describeConflict(conflict, byId)).join('\n');
    yield { type: 'delta', text };
    state.answer = makeAnswer({ ...base, status: 'conflicting_evidence', text, mode, citations: cited, stopReason: 'conflicting_metadata', conflicts });
  } else if (chat === undefined) {
    const extract = extractiveAnswer(state.searchQuestion, evidence, { asked: state.question });
    if (extract.text === '') {
      step.warn('No sentence of the evidence shares a word with the question.');
      const missingEvidence = [`No sentence of the evidence matches "${state.searchQuestion}".`];
      const { status, text, citations } = noEvidenceAnswer();
      state.answer = makeAnswer({ ...base, status, text, mode, citations, stopReason: 'no_matching_sentence', missingEvidence });
    } else if (!extract.coverage.sufficient) {
      // The closest sentences do not cover the question: quoting them as an answer would mislead.
      const missingEvidence = [describeUncovered(extract.coverage)];
      step.warn(missingEvidence[0]);
      // Documents the eligibility rules withheld are said to be, as when no evidence is left at all.
      const { status, citations, text: refusal } = noEvidenceAnswer(withheldByEligibility(state.omitted));
      const text = `${refusal} ${missingEvidence[0]}`;
      yield { type: 'delta', text };
      state.answer = makeAnswer({ ...base, status, text, mode, citations, stopReason: 'insufficient_coverage', missingEvidence });
    } else {
      yield { type: 'delta', text: extract.text };
      const citations = [...new Set(extract.labels)].map((label) => citationOf(evidence[label - 1]));
      state.answer = makeAnswer({ ...base, status: 'answered', text: extract.text, mode: 'extractive', citations, stopReason: 'answered' });
    }
  } else {
    let text = '';
    let finish: ChatFinish | undefined;
    for await (const delta of chat.stream(renderMessages(packet), { signal: step.signal, onFinish: (finished) => (finish = finished) })) {
      throwIfAborted(step.signal, chat.name);
      if (typeof delta !== 'string') {
        throw new AxonError('PROVIDER_RESPONSE_INVALID', `The chat stream yielded ${typeof delta} instead of text.`, {
          component: chat.name,
          fix: 'Check the chat provider: stream() must yield the text as strings.',
        });
      }
      if (delta === '') continue;
      text += delta;
      yield { type: 'delta', text: delta };
    }
    state.answer = makeAnswer({ ...base, status: 'answered', text, mode: 'generated', citations: [], stopReason: 'answered' });
    // Read through a function: TypeScript does not see the callback assign it.
    state.finish = (() => finish)();
  }
  return state;
}

/** A generated answer's citations: the labels it cites, what it cites that does not exist, sentences it leaves uncited, a cut-off reply. */
export function citeStep(state: RagRunState, step: StageStep): RagRunState {
  const answer = state.answer;
  if (answer === undefined || answer.mode !== 'generated' || answer.status !== 'answered') return state;
  const { citations, unknownLabels } = extractCitations(answer.text, state.evidence ?? []);
  if (unknownLabels.length > 0) step.warn(`The answer cites evidence that does not exist: ${unknownLabels.map((label) => `[${label}]`).join(' ')}.`);
  if (citations.length === 0) step.warn('The answer cites no evidence.');
  const uncited = uncitedSentences(answer.text);
  if (uncited.length > 0) step.warn(`${uncited.length} sentence${uncited.length === 1 ? '' : 's'} of the answer cite no evidence.`);
  answer.citations = citations;
  answer.uncitedSentences = uncited;
  // The model's status, checked against what it cites (the contract the extractive answer keeps too).
  const evidence = state.evidence ?? [];
  const judged = judgeModelAnswer(
    state.searchQuestion,
    answer.text,
    citations.map((citation) => citation.label),
    evidence,
    state.question,
  );
  answer.status = judged.status;
  answer.stopReason = judged.reason;
  if (judged.reason === 'insufficient_coverage') {
    answer.missingEvidence = [describeUncovered(judged.coverage!)];
    step.warn(`The answer's citations do not cover the question: ${answer.missingEvidence[0]}`);
  }
  if (judged.conflict) answer.conflicts = [judged.conflict];
  if (state.finish?.truncated) {
    step.warn(
      state.finish.reason === 'length'
        ? 'The answer was cut off: the chat model reached its token limit (raise maxTokens).'
        : `The answer was cut off: the chat stream ended before its end (${state.finish.reason}).`,
    );
    answer.truncated = true;
  }
  return state;
}

// --- Internal helpers ---

function answering(state: RagRunState): NonNullable<RagRunState['answering']> {
  if (state.answering === undefined) throw invariant('answer-stages-need-answering', 'An answer stage ran in a run that does not answer (retrieve).');
  return state.answering;
}

function packetOf(state: RagRunState): NonNullable<RagRunState['packet']> {
  if (state.packet === undefined) throw invariant('generate-after-context', 'The generate stage ran before the context stage built the packet.');
  return state.packet;
}

function invariant(name: string, message: string): AxonError {
  return new AxonError('INTERNAL', message, {
    component: 'rag',
    fix: 'Keep the context stage before the generate stage in answerStages().',
    details: { invariant: name },
  });
}

function evidenceDocuments(state: RagRunState) {
  return (state.evidence ?? []).map((item) => item.document);
}

function budgetRefusal(state: RagRunState) {
  return state.packet?.degradations.find((degradation) => ['refusal', 'escalation', 'clarifying_question'].includes(degradation.kind));
}

function makeAnswer(input: Omit<Answer, 'documents' | 'evidenceRefs'> & { evidence: Evidence[] }): Answer {
  const { evidence, ...rest } = input;
  const documents = evidence.map((item) => item.document);
  const answer: Answer = { ...rest, documents, evidenceRefs: documents.map((document) => document.id) };
  for (const key of ['missingEvidence', 'uncitedSentences', 'conflicts', 'refusal'] as const) if (answer[key] === undefined) delete answer[key];
  return answer;
}

/** How many of the documents the search found the eligibility stage withheld, by reason. */
function withheldByEligibility(omitted: readonly OmittedRef[]): { not_allowed: number; stale: number } {
  const withheld = { not_allowed: 0, stale: 0 };
  for (const entry of omitted) if (entry.reason === 'not_allowed' || entry.reason === 'stale') withheld[entry.reason]++;
  return withheld;
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

function isGenerator<State, Event>(value: unknown): value is AsyncGenerator<Event, State, undefined> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncGenerator).next === 'function' && Symbol.asyncIterator in value;
}
