import type { ChatMessage, ChatProvider } from '../contracts/chat.ts';
import { AxonError } from '../errors.ts';
import {
  planningMessages,
  planSchema,
  readJsonReply,
  repairMessages,
  sufficiencyMessages,
  sufficiencySchema,
  type Plan,
  type RetrieverDescription,
  type Sufficiency,
} from './prompts.ts';
import type { AgenticResultItem, AgenticUsage } from './types.ts';

/** What a planner sees before each decision. */
export interface PlanningState {
  question: string;
  /** The conversation before the question, as delimited data (`formatConversation`), when the run was given one. */
  conversation?: string;
  /** 1, 2, … */
  iteration: number;
  /** The collected results, best first (what the planner may read; its labels are 1-based positions here). */
  results: AgenticResultItem[];
  /** What the last sufficiency check said was missing. */
  missing: string | undefined;
  /** `query → retriever` of every search made so far, the question's speculative probes included. */
  previousQueries: { query: string; retriever: string }[];
  retrievers: RetrieverDescription[];
  maxSubQueries: number;
  signal: AbortSignal;
}

/** A decision, or why none could be made; `attempts` counts model replies (2 after a repair). */
export type Decision<T> = { ok: true; value: T; attempts: number; warnings: string[] } | { ok: false; problem: string; attempts: number; warnings: string[] };

/** Plans sub-queries and judges sufficiency: a chat model, or the offline deterministic planner. */
export interface Planner {
  readonly kind: 'model' | 'offline';
  plan(state: PlanningState): Promise<Decision<Plan>>;
  judge(state: PlanningState): Promise<Decision<Sufficiency>>;
}

/** Counts what is sent to and received from a chat model (the chat contract reports no token usage). */
export class MeteredChat {
  readonly usage: Omit<AgenticUsage, 'services'> = { modelCalls: 0, promptCharacters: 0, completionCharacters: 0 };
  constructor(readonly chat: ChatProvider) {}

  async complete(messages: ChatMessage[], signal: AbortSignal): Promise<string> {
    this.count(messages);
    const reply = await this.chat.complete(messages, { signal, temperature: 0 });
    if (typeof reply !== 'string') {
      throw new AxonError('PROVIDER_RESPONSE_INVALID', `The chat model returned ${typeof reply} instead of text.`, {
        component: this.chat.name,
        fix: "Check the chat provider: complete() must resolve to the reply's text, a string.",
      });
    }
    this.usage.completionCharacters += reply.length;
    return reply;
  }

  async *stream(messages: ChatMessage[], signal: AbortSignal): AsyncGenerator<string> {
    this.count(messages);
    for await (const delta of this.chat.stream(messages, { signal })) {
      if (typeof delta !== 'string') {
        throw new AxonError('PROVIDER_RESPONSE_INVALID', `The chat stream yielded ${typeof delta} instead of text.`, {
          component: this.chat.name,
          fix: 'Check the chat provider: stream() must yield the text as strings.',
        });
      }
      this.usage.completionCharacters += delta.length;
      yield delta;
    }
  }

  private count(messages: ChatMessage[]): void {
    this.usage.modelCalls++;
    this.usage.promptCharacters += messages.reduce((sum, message) => sum + message.content.length, 0);
  }
}

/**
 * Plans with a chat model: the reply must be JSON matching `planSchema` (or `sufficiencySchema`). A reply that
 * cannot be read gets one repair request naming the problem; a second failure is reported, not guessed at.
 */
export class ModelPlanner implements Planner {
  readonly kind = 'model';
  constructor(private readonly chat: MeteredChat) {}

  plan(state: PlanningState): Promise<Decision<Plan>> {
    const messages = planningMessages({
      question: state.question,
      conversation: state.conversation,
      retrievers: state.retrievers,
      results: state.results,
      missing: state.missing,
      maxSubQueries: state.maxSubQueries,
      iteration: state.iteration,
      previousQueries: state.previousQueries.map((entry) => `${entry.query} (${entry.retriever})`),
    });
    return this.ask(messages, planSchema, state.signal);
  }

  judge(state: PlanningState): Promise<Decision<Sufficiency>> {
    return this.ask(sufficiencyMessages(state.question, state.results), sufficiencySchema, state.signal);
  }

  private async ask<T>(messages: ChatMessage[], schema: typeof planSchema | typeof sufficiencySchema, signal: AbortSignal): Promise<Decision<T>> {
    const first = await this.chat.complete(messages, signal);
    const read = readJsonReply(first, schema);
    if (read.ok) return { ok: true, value: read.value as T, attempts: 1, warnings: [] };
    const warning = `The model's reply could not be used (${read.problem}); asked once more.`;
    const second = await this.chat.complete(repairMessages(messages, first, read.problem), signal);
    const retried = readJsonReply(second, schema);
    if (retried.ok) return { ok: true, value: retried.value as T, attempts: 2, warnings: [warning] };
    const problem = `The model's reply could not be used twice: first ${read.problem}, then ${retried.problem}.`;
    return { ok: false, problem, attempts: 2, warnings: [warning] };
  }
}
