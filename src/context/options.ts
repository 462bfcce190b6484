import { z } from 'zod';
import { TRUST_LEVELS } from './eligibility.ts';
import type { Tokenizer } from './tokens.ts';

const trustLevel = z.enum(TRUST_LEVELS);

/**
 * The options of a run's context packet (`answer(question, { context })`, `axon ask --context FILE`), validated
 * before any work is done: an unknown field or a value of the wrong type is a `CONFIG_INVALID` error naming its path.
 */
export const contextOptionsSchema = z
  .object({
    /** The context window given to the run, in tokens. @default 8000 */
    maxTokens: z.number().int().positive().optional(),
    /** Tokens kept free for the answer. @default 1000 */
    reservedForOutput: z.number().int().nonnegative().optional(),
    /** Counts tokens: `{ name, count(text) }`. @default estimateTokenizer */
    tokenizer: z
      .custom<Tokenizer>(
        (value) =>
          typeof value === 'object' && value !== null && typeof (value as Tokenizer).name === 'string' && typeof (value as Tokenizer).count === 'function',
        {
          message: 'must be { name: string, count(text): number }',
        },
      )
      .optional(),
    /** Recorded in the packet. @default a hash of the rules and the section order */
    policyVersion: z.string().min(1).optional(),
    /** Evidence scoring below this is left out as `not_relevant`. @default no threshold */
    minScore: z.number().finite().optional(),
    /** Most pieces of evidence in one packet. @default no limit */
    maxEvidence: z.number().int().positive().optional(),
    /** Refuse (an `escalation`) rather than answer when any evidence has to be left out to fit. @default false */
    requireCompleteEvidence: z.boolean().optional(),
    /** Ask the user to narrow the question rather than answer when whole sources did not fit. @default false */
    clarifyUnderPressure: z.boolean().optional(),
    /** Trust level of evidence whose document declares none. @default 'internal' */
    defaultTrustLevel: trustLevel.optional(),
    /** Policies the answer must follow; pinned, placed after the instructions. @default [] */
    policies: z.array(z.string()).optional(),
    /** The task's goal or working state; pinned. */
    goal: z.string().optional(),
    /** Tool outputs given to the model as data. @default [] */
    toolResults: z
      .array(z.object({ name: z.string().min(1), content: z.string(), id: z.string().min(1).optional(), trustLevel: trustLevel.optional() }).strict())
      .optional(),
    /** Memories given to the model as data. @default [] */
    memories: z
      .array(z.object({ id: z.string().min(1), content: z.string(), trustLevel: trustLevel.optional(), updatedAt: z.string().optional() }).strict())
      .optional(),
    /** Worked examples. @default [] */
    examples: z.array(z.string()).optional(),
    /** Known gaps to tell the model about. @default [] */
    exclusions: z.array(z.string()).optional(),
  })
  .strict();
