import type { ChatMessage } from '../contracts/chat.ts';
import type { TrustLevel } from './eligibility.ts';

/**
 * The kinds of section a packet holds, in the order the model sees them (SPEC §7); the conversation so far comes
 * right before the request it leads to.
 */
export const SECTION_ORDER = [
  'system_instruction',
  'policy',
  'conversation',
  'user_request',
  'working_memory',
  'tool_result',
  'retrieved_evidence',
  'memory',
  'example',
  'exclusion',
] as const;
export type SectionKind = (typeof SECTION_ORDER)[number];

/** Sections that go into the system message; every other kind is data in the user message. */
export const INSTRUCTION_KINDS: readonly SectionKind[] = ['system_instruction', 'policy'];

/** Why a reference is not in the packet. */
export type OmissionReason = 'not_relevant' | 'stale' | 'not_allowed' | 'duplicate' | 'over_budget';

/** One part of what the model is given. */
export interface ContextSection {
  kind: SectionKind;
  title: string;
  /** Exactly the text placed in the prompt: data sections are already delimited and neutralised. */
  content: string;
  /** Ids of the documents, tools or memories the content comes from. */
  sourceRefs: string[];
  trustLevel: TrustLevel;
  /** When the source was last updated and when it stops being fresh, where known (ISO 8601). */
  freshness?: { updatedAt?: string; expiresAt?: string };
  /** Estimated (or counted, with a real tokenizer) tokens of `content`. */
  tokens: number;
  /** A pinned section is never dropped to fit the budget. */
  pinned: boolean;
  /** The label evidence is cited by (`[n]`), for retrieved evidence. */
  label?: number;
}

/** A reference left out of the packet, and why. */
export interface OmittedRef {
  ref: string;
  reason: OmissionReason;
  detail?: string;
  /** Where the reference comes from, when it is a document (never its content). */
  sourceName?: string;
}

/**
 * A way the builder gave ground under budget pressure, said out loud:
 * - `fewer_sources`: evidence (or tool results, memories, examples) left out to fit;
 * - `truncated_context`: one bulky item shortened to fit, because nothing else of its kind fitted whole;
 * - `clarifying_question`: sources had to be left out entirely, so the user is asked to narrow the question
 *   (with `clarifyUnderPressure`);
 * - `refusal`: the pinned sections alone do not fit, so the run is refused rather than answered blind;
 * - `escalation`: the policy requires complete evidence and some had to be left out.
 */
export interface Degradation {
  kind: 'fewer_sources' | 'truncated_context' | 'clarifying_question' | 'refusal' | 'escalation';
  detail: string;
}

export interface ContextBudget {
  /** The model's context window given to this run. */
  maxTokens: number;
  /** Tokens kept free for the answer. */
  reservedForOutput: number;
  /** Tokens the sections take, including the separators between them. */
  used: number;
}

/** What the model was allowed to see, and what was kept from it, for one run. */
export interface ContextPacket {
  packetId: string;
  runId: string;
  /** The version of the rules the packet was built under (eligibility policy, evidence rules, order). */
  policyVersion: string;
  /** The tokenizer the counts come from. */
  tokenizer: string;
  sections: ContextSection[];
  budget: ContextBudget;
  omitted: OmittedRef[];
  degradations: Degradation[];
}

/** Tokens charged for each chat message's framing (role and separators), as OpenAI's chat format does. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * The messages a chat model receives for a packet: one system message with the instruction and policy sections,
 * and one user message with every data section, both in the fixed order. A packet read back from a trace renders
 * to exactly the messages the model was given.
 */
export function renderMessages(packet: Pick<ContextPacket, 'sections'>): ChatMessage[] {
  const ordered = orderSections(packet.sections);
  const system = ordered.filter((section) => INSTRUCTION_KINDS.includes(section.kind));
  const data = ordered.filter((section) => !INSTRUCTION_KINDS.includes(section.kind));
  return [
    { role: 'system', content: system.map((section) => section.content).join('\n\n') },
    { role: 'user', content: data.map((section) => section.content).join('\n\n') },
  ];
}

/** Sections sorted into the fixed order; sections of one kind keep their relative order. */
export function orderSections<T extends { kind: SectionKind }>(sections: T[]): T[] {
  return sections
    .map((section, index) => ({ section, index }))
    .sort((a, b) => SECTION_ORDER.indexOf(a.section.kind) - SECTION_ORDER.indexOf(b.section.kind) || a.index - b.index)
    .map((entry) => entry.section);
}
