import type { Usage, UsageKind } from '../contracts/usage.ts';

/**
 * What a run's provider calls consumed, summed per kind of call, provider and model, in the services' own counts;
 * and, with a price table, what that cost. Kept apart from the calls themselves (`usage-meter.ts`), so a trace
 * read back from disk and a live run are summed the same way.
 */

/** One kind of call to one provider and model, summed over a run (or over one stage of it). */
export interface UsageEntry {
  kind: UsageKind;
  /** The provider's `name`, as the trace shows it, e.g. `openai-chat`. */
  provider: string;
  /** The model (an Azure provider's deployment), where the provider says. */
  model?: string;
  /** Calls that returned (a streamed reply: that ended, or that its reader left). A failed call is not counted. */
  calls: number;
  /** Of those, calls whose service reported no usage: `unknown`. Their tokens are in none of the sums below. */
  unknownCalls: number;
  /** Tokens the service read, over the calls that reported them. Absent when none did. */
  inputTokens?: number;
  /** Tokens the service generated (chat). Absent when no call reported them. */
  outputTokens?: number;
  /** Search units billed (Cohere's rerank). Absent when no call reported them. */
  searchUnits?: number;
  /** What the counts cost by the price table; absent when the table has no price for this model, or lacks one it needs. */
  cost?: number;
}

/** The usage of a run (`Answer.usage`, `RetrievalResult.usage`, `RunTrace.usage`) or of one stage (`StageRecord.usage`). */
export interface RunUsage {
  /** One entry per kind of call, provider and model, in the order each was first called. */
  entries: UsageEntry[];
  /** Calls over every entry. */
  calls: number;
  /** Calls over every entry whose usage is unknown (their service reported none). */
  unknownCalls: number;
  /**
   * The sum of the entries' costs, when a price table was given and prices at least one entry. It leaves out the
   * entries in `unpriced` and the calls in `unknownCalls`: never an estimate.
   */
  cost?: number;
  /** `provider/model` of each entry with usage the price table cannot price (no entry for it, or no price for a count it has). */
  unpriced?: string[];
  /** The price table's currency, when a table was given. */
  currency?: string;
  /** The day the price table's prices were read (`PriceTable.asOf`), when a table was given. */
  pricesAsOf?: string;
}

/**
 * The price of one model's usage, in whatever currency the table is written in (every price in one table in the
 * same one). Give the prices of the counts the model's service reports: an entry with a count whose price is
 * missing has no cost.
 */
export interface ModelPrice {
  /** The price of one million input tokens (a prompt, the texts embedded, a reranker's query and documents). */
  inputPerMillion?: number;
  /** The price of one million output tokens (a chat model's reply). */
  outputPerMillion?: number;
  /** The price of one search unit (Cohere's rerank). */
  perSearchUnit?: number;
}

/**
 * What provider usage costs, as read from the services' price pages on one date: prices change, so a table says
 * when it was read (`asOf`) and in which currency. Axon ships no prices of its own: a model missing from `models`
 * has no cost (`RunUsage.unpriced` names it), nothing is guessed.
 */
export interface PriceTable {
  /** The currency of every price in the table, e.g. `USD`. */
  readonly currency: string;
  /** The day the prices were read from the services' price pages (ISO 8601, `YYYY-MM-DD`); each cost is shown with it. */
  readonly asOf: string;
  /** Where the prices were read (a URL or a note), for whoever checks them later. */
  readonly source?: string;
  /**
   * Prices by `"<provider>/<model>"`, the provider's `name` and model as a usage entry shows them
   * (`"openai-chat/gpt-4o-mini"`, `"voyage-rerank/rerank-2.5"`), or `"<provider>"` alone for a provider without a model.
   */
  readonly models: Readonly<Record<string, ModelPrice>>;
}

/** Who a call went to: the provider's name, its model, and its GenAI provider name for telemetry. */
export interface UsageSource {
  kind: UsageKind;
  provider: string;
  model?: string;
  genAiProvider?: string;
}

/** The key a usage entry is priced by: `provider/model`, or the provider alone. */
function priceKey(entry: Pick<UsageEntry, 'provider' | 'model'>): string {
  return entry.model === undefined ? entry.provider : `${entry.provider}/${entry.model}`;
}

/**
 * Who a provider's calls are counted under: its `name`, and its model (a string `model` property, or the
 * `modelId` of a model object, as the AI SDK adapters hold).
 */
export function usageSource(kind: UsageKind, provider: { readonly name: string; readonly genAiProvider?: string }): UsageSource {
  const model = (provider as { model?: unknown }).model;
  const modelId = typeof model === 'object' && model !== null ? (model as { modelId?: unknown }).modelId : undefined;
  const name = typeof model === 'string' ? model : typeof modelId === 'string' ? modelId : undefined;
  const source: UsageSource = { kind, provider: String(provider.name) };
  if (name !== undefined && name !== '') source.model = name;
  if (typeof provider.genAiProvider === 'string' && provider.genAiProvider !== '') source.genAiProvider = provider.genAiProvider;
  return source;
}

/** Sums calls into entries; `summary` gives the `RunUsage`, priced by a table when one is given. */
export class UsageTally {
  private readonly entries = new Map<string, Mutable<UsageEntry>>();
  private changes = 0;

  /** Changes with every call counted (or tally added): a summary made at one version stays true while it does not. */
  get version(): number {
    return this.changes;
  }

  /** Nothing was counted. */
  get empty(): boolean {
    return this.entries.size === 0;
  }

  /** One call that returned, with what its service reported (`'unknown'`, or nothing at all, counts it as unknown). */
  record(source: UsageSource, reports: readonly Usage[]): void {
    const entry = this.entry(source.kind, source.provider, source.model);
    this.changes++;
    entry.calls++;
    const counts = reports.filter((usage): usage is Exclude<Usage, 'unknown'> => usage !== 'unknown' && typeof usage === 'object' && usage !== null);
    if (counts.length === 0) {
      entry.unknownCalls++;
      return;
    }
    for (const usage of counts) {
      for (const field of COUNT_FIELDS) {
        const value = usage[field];
        if (typeof value === 'number' && Number.isFinite(value)) entry[field] = (entry[field] ?? 0) + value;
      }
    }
  }

  /** Add another tally's summary (a search run inside this one): its calls and counts, not its costs. */
  add(usage: RunUsage | undefined): void {
    for (const other of usage?.entries ?? []) {
      const entry = this.entry(other.kind, other.provider, other.model);
      this.changes++;
      entry.calls += other.calls;
      entry.unknownCalls += other.unknownCalls;
      for (const field of COUNT_FIELDS) if (other[field] !== undefined) entry[field] = (entry[field] ?? 0) + other[field];
    }
  }

  /** A copy of what has been counted so far, to tell later what a step added (`since`). */
  snapshot(): RunUsage {
    return this.summary();
  }

  /** The entries, each priced by `prices` when given. */
  summary(prices?: PriceTable): RunUsage {
    const entries: UsageEntry[] = [];
    const unpriced: string[] = [];
    let cost: number | undefined;
    let calls = 0;
    let unknownCalls = 0;
    for (const entry of this.entries.values()) {
      const copy: UsageEntry = { ...entry };
      calls += entry.calls;
      unknownCalls += entry.unknownCalls;
      if (prices !== undefined && COUNT_FIELDS.some((field) => entry[field] !== undefined)) {
        const priced = costOf(entry, prices);
        if (priced === undefined) unpriced.push(priceKey(entry));
        else {
          copy.cost = priced;
          cost = round((cost ?? 0) + priced);
        }
      }
      entries.push(copy);
    }
    const usage: RunUsage = { entries, calls, unknownCalls };
    if (cost !== undefined) usage.cost = cost;
    if (unpriced.length > 0) usage.unpriced = unpriced;
    if (prices !== undefined) {
      usage.currency = prices.currency;
      usage.pricesAsOf = prices.asOf;
    }
    return usage;
  }

  private entry(kind: UsageKind, provider: string, model: string | undefined): Mutable<UsageEntry> {
    const key = `${kind}\u0000${provider}\u0000${model ?? ''}`;
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { kind, provider, ...(model === undefined ? {} : { model }), calls: 0, unknownCalls: 0 };
      this.entries.set(key, entry);
    }
    return entry;
  }
}

/** What `after` counted beyond `before` (a snapshot of the same tally): the usage of what ran in between. */
export function usageSince(before: RunUsage, after: RunUsage, prices?: PriceTable): RunUsage {
  const tally = new UsageTally();
  const earlier = new Map(before.entries.map((entry) => [`${entry.kind}\u0000${entry.provider}\u0000${entry.model ?? ''}`, entry]));
  const added: UsageEntry[] = [];
  for (const entry of after.entries) {
    const previous = earlier.get(`${entry.kind}\u0000${entry.provider}\u0000${entry.model ?? ''}`);
    const calls = entry.calls - (previous?.calls ?? 0);
    if (calls === 0) continue;
    const difference: Mutable<UsageEntry> = {
      kind: entry.kind,
      provider: entry.provider,
      calls,
      unknownCalls: entry.unknownCalls - (previous?.unknownCalls ?? 0),
    };
    if (entry.model !== undefined) difference.model = entry.model;
    for (const field of COUNT_FIELDS) {
      const value = (entry[field] ?? 0) - (previous?.[field] ?? 0);
      if (entry[field] !== undefined && (previous?.[field] !== undefined || value > 0)) difference[field] = value;
    }
    added.push(difference);
  }
  tally.add({ entries: added, calls: 0, unknownCalls: 0 });
  return tally.summary(prices);
}

// --- Internal helpers ---

type Mutable<T> = { -readonly [Key in keyof T]: T[Key] };

const COUNT_FIELDS = ['inputTokens', 'outputTokens', 'searchUnits'] as const;

const PRICE_FIELDS: Record<(typeof COUNT_FIELDS)[number], { field: keyof ModelPrice; per: number }> = {
  inputTokens: { field: 'inputPerMillion', per: 1_000_000 },
  outputTokens: { field: 'outputPerMillion', per: 1_000_000 },
  searchUnits: { field: 'perSearchUnit', per: 1 },
};

/** The entry's cost, or `undefined` when the table has no price for it or lacks the price of a count it has. */
function costOf(entry: UsageEntry, prices: PriceTable): number | undefined {
  const key = priceKey(entry);
  const price = Object.hasOwn(prices.models, key) ? prices.models[key] : undefined;
  if (price === undefined) return undefined;
  let cost = 0;
  for (const field of COUNT_FIELDS) {
    const count = entry[field];
    if (count === undefined || count === 0) continue;
    const { field: priceField, per } = PRICE_FIELDS[field];
    const unitPrice = price[priceField];
    if (unitPrice === undefined) return undefined;
    cost += (count / per) * unitPrice;
  }
  return round(cost);
}

/** Costs are sums of small fractions: rounded to 1e-10 so that 0.1 + 0.2 prints as 0.3. */
function round(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}
