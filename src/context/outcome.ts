import type { CallerContext } from './eligibility.ts';
import type { ContextPacket } from './packet.ts';

/**
 * Why a run stopped where it did; one vocabulary for `RAG.answer` and the agentic retriever.
 *
 * A pipeline's answer (`Answer.stopReason`): `answered`; `no_eligible_evidence` (nothing survived retrieval and
 * eligibility); `no_matching_sentence` (an extractive answer found no sentence sharing a word with the
 * question); `insufficient_coverage` (the quoted sentences, or what a model's answer cites, do not cover the
 * question: `src/answer/coverage.ts`); `model_found_no_answer` (the model said the documents do not hold the
 * answer, citing nothing); `uncited_answer` (the model's answer cites no evidence); `conflicting_metadata` (the
 * evidence disagrees, from metadata); `conflicting_answer` (the model said the sources disagree, citing each);
 * `guardrail` (the guardrail refused); `budget`, `escalation`, `clarifying_question` (the context budget refused,
 * escalated or asked the user to narrow it).
 *
 * The agentic loop (`AgenticResult.stopReason`): the results were judged `sufficient`; `max_iterations` or
 * `max_sub_queries` (the total cap) was reached; a round added `no_new_results` (or the planner proposed
 * nothing); planning failed (`planning_failed`: malformed output twice, or only unknown retrievers); or a
 * guardrail `blocked` the input or the answer. A cancelled run rejects with an `ABORTED` error whose details
 * say `stopReason: 'aborted'`.
 */
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
  | 'clarifying_question'
  | 'sufficient'
  | 'max_iterations'
  | 'max_sub_queries'
  | 'no_new_results'
  | 'planning_failed'
  | 'blocked';

/**
 * Where a guardrail is asked: on the user's question before anything runs (`input`, agentic retrieval), on the
 * assembled context packet before the model is called (`context`, `RAG.answer`), or on the answer before it
 * is released (`output`, agentic retrieval).
 */
export type GuardrailStage = 'input' | 'context' | 'output';

/** What a guardrail is asked about. */
export interface GuardrailCheck {
  stage: GuardrailStage;
  /** What is checked: the question (`input`, `context`) or the answer (`output`). */
  text: string;
  /** The user's question. */
  question: string;
  /** Fires when the run is cancelled. */
  signal: AbortSignal;
  /** Who is asking, where the run knows (`context`: the run's `caller`, possibly `undefined`). */
  caller?: CallerContext;
  /** What the model would be given (`context`). */
  packet?: ContextPacket;
}

/** The check `RAG.answer` makes: on the packet, before the model is called. */
export interface ContextGuardrailCheck extends GuardrailCheck {
  stage: 'context';
  caller: CallerContext | undefined;
  packet: ContextPacket;
}

export type GuardrailVerdict = { action: 'allow' } | { action: 'block'; reason: string };

/** A verdict; or a reason, which blocks; or `undefined`, which allows. */
export type GuardrailDecision = GuardrailVerdict | string | undefined;

/**
 * Says whether a run may go on. Return `{ action: 'allow' }` or `undefined` to let it, `{ action: 'block',
 * reason }` or the reason alone to refuse it; sync or async. A guardrail that throws fails the run
 * (`RAG.answer`) or blocks it (agentic retrieval); any other value blocks: it never fails open.
 *
 * @example
 * const guardrail: Guardrail = ({ question }) => (/password/i.test(question) ? 'credentials are not discussed here' : undefined);
 */
export type Guardrail<Check extends GuardrailCheck = GuardrailCheck> = (check: Check) => GuardrailDecision | Promise<GuardrailDecision>;

/**
 * A guardrail's decision as a verdict. `valid` is false for a value that is no decision at all (a number, a
 * malformed verdict): it blocks, with a reason that says so.
 */
export function guardrailVerdict(decision: unknown): { verdict: GuardrailVerdict; valid: boolean } {
  if (decision === undefined) return { verdict: { action: 'allow' }, valid: true };
  if (typeof decision === 'string') return { verdict: { action: 'block', reason: decision }, valid: true };
  const action = (decision as { action?: unknown } | null)?.action;
  if (action === 'allow') return { verdict: { action: 'allow' }, valid: true };
  if (action === 'block') return { verdict: { action: 'block', reason: String((decision as { reason?: unknown }).reason ?? 'blocked') }, valid: true };
  return { verdict: { action: 'block', reason: 'The guardrail returned an invalid verdict.' }, valid: false };
}

/** What every run answers when nothing supports an answer; the model is not called. */
export const NO_EVIDENCE_TEXT = 'I could not find anything in the indexed documents that answers this question.';

/**
 * The answer of a run without evidence: status `missing_evidence` and nothing to cite. Its text is
 * `NO_EVIDENCE_TEXT`, unless the search found documents that the eligibility rules withheld (`withheld`: how many
 * for each reason, `not_allowed` or `stale`): then it says how many and why, and shows none of them, so a caller
 * who lacks a tenant or a role is not told that nothing matches.
 */
export function noEvidenceAnswer(withheld: { not_allowed?: number; stale?: number } = {}): { status: 'missing_evidence'; text: string; citations: [] } {
  const notAllowed = withheld.not_allowed ?? 0;
  const stale = withheld.stale ?? 0;
  const total = notAllowed + stale;
  if (total === 0) return { status: 'missing_evidence', text: NO_EVIDENCE_TEXT, citations: [] };
  const notAllowedWhy = 'not allowed for this caller (tenant, role, redaction or trust level)';
  const why =
    stale === 0 ? ` as ${notAllowedWhy}` : notAllowed === 0 ? ' as out of date' : ` (${notAllowed} not allowed for this caller, ${stale} out of date)`;
  const documents = total === 1 ? '1 matching document was' : `${total} matching documents were`;
  const text = `I cannot answer this: ${documents} withheld by the eligibility rules${why}, and ${total === 1 ? 'it is' : 'they are'} not shown.`;
  return { status: 'missing_evidence', text, citations: [] };
}
