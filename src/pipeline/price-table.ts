import { z } from 'zod';
import type { PriceTable } from './usage.ts';

/**
 * The price of one model's usage (`ModelPrice`), in the table's currency. At least one price; each a finite
 * number ≥ 0. A count the model's service reports without its price here leaves the model without a cost.
 */
export const modelPriceSchema = z
  .object({
    /** The price of one million input tokens (a prompt, the texts embedded, a reranker's query and documents). */
    inputPerMillion: z.number().finite().min(0).optional(),
    /** The price of one million output tokens (a chat model's reply). */
    outputPerMillion: z.number().finite().min(0).optional(),
    /** The price of one search unit (Cohere's rerank). */
    perSearchUnit: z.number().finite().min(0).optional(),
  })
  .strict()
  .refine((price) => price.inputPerMillion !== undefined || price.outputPerMillion !== undefined || price.perSearchUnit !== undefined, {
    message: 'give at least one of inputPerMillion, outputPerMillion, perSearchUnit',
  });

/**
 * A price table (`PriceTable`): the currency, the day the prices were read (`asOf`), where (`source`), and prices by
 * `"<provider>/<model>"`, the provider's `name` and model as usage entries show them (`"openai-chat/gpt-4o-mini"`,
 * `"openai-embeddings/text-embedding-3-small"`, `"cohere-rerank/rerank-v3.5"`), or `"<provider>"` alone for a
 * provider without a model.
 *
 * @example { "currency": "USD", "asOf": "2026-11-30", "models": { "anthropic-chat/claude-sonnet-4-5": { "inputPerMillion": 3, "outputPerMillion": 15 } } }
 */
export const priceTableSchema: z.ZodType<PriceTable, PriceTableInput> = z
  .object({
    /** The currency of every price, e.g. `USD`. */
    currency: z.string().trim().min(1),
    /** The day the prices were read (`YYYY-MM-DD`): prices change, and a cost is only as current as its table. */
    asOf: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'asOf is the day the prices were read, as YYYY-MM-DD (e.g. "2026-11-30")' })
      .refine((day) => !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day), {
        message: 'asOf is not a real calendar day',
      }),
    /** Where the prices were read (a URL or a note). */
    source: z.string().min(1).optional(),
    /** Prices by `"<provider>/<model>"`. */
    models: z.record(
      z
        .string()
        .min(1)
        .refine((key) => !key.startsWith('/') && !key.endsWith('/'), { message: 'a price key is "<provider>/<model>" (e.g. "openai-chat/gpt-4o-mini")' }),
      modelPriceSchema,
    ),
  })
  .strict();

/** A price table as written in configuration, before it is checked. */
export interface PriceTableInput {
  currency: string;
  asOf: string;
  source?: string;
  models: Record<string, z.input<typeof modelPriceSchema>>;
}
