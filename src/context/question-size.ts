import { AxonError } from '../errors.ts';
import { ContextBuilder, type ContextBuilderOptions } from './builder.ts';

/** What a run pins into every packet besides the question: its instructions, policies and goal. */
export interface PinnedSettings extends Omit<ContextBuilderOptions, 'runId'> {
  policies?: string[];
  goal?: string;
}

/**
 * Refuse a question too long for the context budget before any retrieval is done: the pinned sections
 * (instructions, policies, the evidence rules, the goal) and the question must fit in `maxTokens` less
 * `reservedForOutput`, or no packet can be built whatever is found. The error names the limit in tokens (of the
 * budget's tokenizer) and what it is made of.
 *
 * A question is judged here only when the other pinned sections leave it room: a budget that the instructions
 * alone exceed is the pipeline's setting, not the question's fault, and the run still ends in a `budget` refusal.
 *
 * @throws AxonError `QUESTION_TOO_LONG` (details: `questionTokens`, `limitTokens`, `maxTokens`,
 *   `reservedForOutput`, `pinnedTokens`, `tokenizer`)
 */
export function assertQuestionFits(question: string, settings: PinnedSettings, instructions: string): void {
  const withQuestion = pinnedPacket(settings, instructions, question);
  if (!withQuestion.degradations.some((degradation) => degradation.kind === 'refusal')) return;
  const { maxTokens, reservedForOutput, used } = withQuestion.budget;
  // The same sections with an empty question: what the question's framing and the rest cost without its words.
  const without = pinnedPacket(settings, instructions, '').budget.used;
  const questionTokens = used - without;
  const limitTokens = maxTokens - reservedForOutput - without;
  if (limitTokens <= 0) return;
  const tokenizer = withQuestion.tokenizer;
  throw new AxonError(
    'QUESTION_TOO_LONG',
    `The question takes ${questionTokens} tokens, over the ${limitTokens} the context budget leaves for it ` +
      `(maxTokens ${maxTokens}, less ${reservedForOutput} reserved for the answer and ${without} for the instructions and rules; counted by the ${tokenizer} tokenizer).`,
    {
      component: 'context-builder',
      fix: `Shorten the question to at most ${limitTokens} tokens, or raise the context budget (context.maxTokens; axon ask --max-tokens) if the model's context window allows.`,
      details: { questionTokens, limitTokens, maxTokens, reservedForOutput, pinnedTokens: without, tokenizer },
    },
  );
}

function pinnedPacket(settings: PinnedSettings, instructions: string, question: string) {
  const builder = new ContextBuilder({ ...settings, runId: 'question-size' });
  builder.systemInstruction(instructions);
  for (const policy of settings.policies ?? []) builder.policy(policy);
  builder.userRequest(question);
  if (settings.goal) builder.workingMemory(settings.goal);
  return builder.build();
}
