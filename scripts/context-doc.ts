/**
 * Writes docs/context.md: the prose below around real output of `axon ask --explain`, `axon ask --json` and
 * `axon trace`, run in a temporary folder over a small JSON Lines corpus. Run: `npx tsx scripts/context-doc.ts`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../app/cli/main.ts';
import { renderMessages } from '../src/context/packet.ts';

const CORPUS = [
  { ref: 'refund-2024', text: 'Refunds are processed within 30 days of the request.', tenantId: 'acme', updatedAt: '2024-01-10', maxAgeDays: 365 },
  {
    ref: 'refund-2026',
    text: 'Refunds are processed within 14 days of the request, to the original payment method.',
    tenantId: 'acme',
    updatedAt: '2026-01-05',
    maxAgeDays: 365,
    trustLevel: 'trusted',
  },
  { ref: 'refund-globex', text: 'Globex refunds are processed within 5 days.', tenantId: 'globex' },
  {
    ref: 'refund-desk',
    text: 'Refund requests are answered by the billing desk, reachable at billing@acme.example or +44 20 7946 0958.',
    redaction: 'pii',
    tenantId: 'acme',
  },
  { ref: 'refund-finance', text: 'Refunds above 10000 euros are processed by finance after approval.', allowedRoles: ['finance'], tenantId: 'acme' },
  { ref: 'x200-sheet', text: 'The X200 laptop carries a warranty of two years.', facts: { 'x200.warranty.years': 2 } },
  { ref: 'x200-faq', text: 'The X200 laptop carries a warranty of three years.', facts: { 'x200.warranty.years': 3 } },
];

interface Captured {
  code: number;
  stdout: string;
}

async function axon(cwd: string, argv: string[]): Promise<Captured> {
  const stdout: string[] = [];
  const code = await main(argv, {
    out: (text) => stdout.push(text),
    err: () => {},
    errorStream: { write: () => true, isTTY: false } as unknown as NodeJS.WritableStream,
    cwd,
  });
  if (code !== 0) throw new Error(`axon ${argv.join(' ')} exited ${code}: ${stdout.join('\n')}`);
  return { code, stdout: stdout.join('\n') };
}

/** The page, generated from real runs. */
export async function generateContextDoc(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'axon-context-doc-'));
  try {
    await mkdir(join(directory, 'docs'));
    for (const { ref, ...fields } of CORPUS) await writeFile(join(directory, 'docs', `${ref}.jsonl`), `${JSON.stringify({ ref, ...fields })}\n`);
    await axon(directory, ['ingest', 'docs']);

    const packetArgs = ['ask', 'How many days until refunds are processed?', '--tenant', 'acme', '--role', 'support', '--now', '2026-06-01', '--explain'];
    const packet = await axon(directory, packetArgs);
    const stored = JSON.parse((await axon(directory, ['trace', '--last', '--json'])).stdout);
    const firstRun = stored.runId as string;
    const userMessage = renderMessages(stored.packet)[1].content;

    const missingArgs = ['ask', 'Which volcano erupted near Naples?', '--tenant', 'acme', '--json'];
    const missing = JSON.parse((await axon(directory, missingArgs)).stdout);
    const missingShown = {
      runId: missing.runId,
      status: missing.status,
      answer: missing.answer,
      citations: missing.citations,
      evidenceRefs: missing.evidenceRefs,
      missingEvidence: missing.missingEvidence,
      stopReason: missing.stopReason,
    };

    const conflictArgs = ['ask', 'How long is the X200 laptop warranty?', '--json'];
    const conflict = JSON.parse((await axon(directory, conflictArgs)).stdout);
    const conflictShown = {
      status: conflict.status,
      answer: conflict.answer,
      citations: conflict.citations.map((citation: { label: number; sourceName: string }) => ({ label: citation.label, sourceName: citation.sourceName })),
      conflicts: conflict.conflicts,
    };

    const laterArgs = ['ask', 'How many days until refunds are processed?', '--tenant', 'acme', '--role', 'support', '--now', '2027-02-01'];
    await axon(directory, laterArgs);
    const secondRun = JSON.parse((await axon(directory, ['trace', '--last', '--json'])).stdout).runId as string;
    const trace = await axon(directory, ['trace', firstRun.slice(0, 8)]);
    const diff = await axon(directory, ['trace', '--diff', firstRun.slice(0, 8), secondRun.slice(0, 8)]);

    const command = (args: string[]) => `axon ${args.map((arg) => (/[\s?]/.test(arg) ? JSON.stringify(arg) : arg)).join(' ')}`;
    return page({
      corpus: CORPUS.map((line) => JSON.stringify(line)).join('\n'),
      packet: `$ ${command(packetArgs)}\n${packet.stdout}`,
      message: userMessage,
      missing: `$ ${command(missingArgs)}\n${JSON.stringify(missingShown, null, 2)}`,
      conflict: `$ ${command(conflictArgs)}\n${JSON.stringify(conflictShown, null, 2)}`,
      trace: `$ axon trace ${firstRun.slice(0, 8)}\n${trace.stdout}`,
      diff: `$ ${command(laterArgs)}\n$ axon trace --diff ${firstRun.slice(0, 8)} ${secondRun.slice(0, 8)}\n${diff.stdout}`,
    });
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function page(blocks: Record<'corpus' | 'packet' | 'message' | 'missing' | 'conflict' | 'trace' | 'diff', string>): string {
  return `<!-- Generated by scripts/context-doc.ts from real runs; edit the script, then run \`npx tsx scripts/context-doc.ts\`. -->
# Context engineering

The model sees an assembled, labelled, policy-checked **context packet**, never a dump of search results
(SPEC §7). The software, not the model, decides what a caller may see; the run refuses or flags instead of
answering when evidence is missing, stale or conflicting; and every run is stored so it can be reconstructed and
compared with another. Everything here is in \`axon-rag/context\`, and \`RAG.answer\` / \`RAG.stream\` use it.

## Eligibility, enforced by code

Documents carry their eligibility in metadata: \`tenantId\`, \`allowedRoles\`, \`redaction\`
(\`none | pii | secret | tenant_scoped\`), \`trustLevel\` (\`trusted | internal | user_supplied | public | model_generated | untrusted\`;
\`unknown\` is excluded), and \`updatedAt\` with \`maxAgeDays\`. \`axon ingest\` of JSON Lines keeps these fields (and
\`supersedes\`, \`documentKey\`, \`version\`, \`facts\`) from each line; Markdown front matter does the same.

The caller (\`{ tenantId, roles, now }\`, on the command line \`--tenant\`, \`--role\`, \`--now\`) becomes a **store
filter applied inside the search**, so \`topK\` is spent on documents the caller may see, and every document is
**checked again before inclusion**:

- a document of another tenant, or of a tenant when the caller names none, is \`not_allowed\`;
- \`allowedRoles\` must share a role with the caller (missing means every role, an empty list means none);
- \`secret\` never enters; \`tenant_scoped\` enters only inside its tenant; \`pii\` passes through the policy's
  redactor first (the default one replaces e-mail addresses, phone, card, IBAN and SSN numbers);
- a document older than its \`maxAgeDays\` at the caller's \`now\` is \`stale\`, and so is one that \`supersedes\` names;
- every check fails closed: a value of the wrong type makes the document ineligible.

Without a caller the search is not filtered, but the check before inclusion still runs (for a caller of no tenant
and no role), so \`secret\` and unknown-trust documents never reach a model. \`eligibilityFilter(caller, policy)\` and
\`checkEligibility(document, caller, policy)\` are the two halves, shared with agentic retrieval.

A subclass sets the rules by overriding \`eligibilityPolicy()\`:

| field | default | meaning |
|---|---|---|
| \`untenanted\` | \`'shared'\` | whether a document without \`tenantId\` is seen by every tenant or by nobody (\`'deny'\`) |
| \`defaultTrustLevel\` | \`'internal'\` | the trust of a document that declares none; \`'unknown'\` excludes such documents |
| \`maxAgeDays\` | no limit | the maximum age of a document that has an \`updatedAt\` but no \`maxAgeDays\` |
| \`redactor\` | \`defaultPiiRedactor\` | \`{ name, redact(text) }\`, applied to \`pii\` documents |

\`answer.omitted\` (and \`axon ask --json\`'s \`omitted\`) is for the application and its operators: its details name
why a document was refused. Show end users the answer and its citations, not the omissions.

## The packet

Sections come in a fixed order: system instructions, policy, the conversation so far (earlier questions
\`user_supplied\`, earlier answers \`model_generated\`, with a budget of their own and never evidence: see
[conversations](conversations.md)), user request, goal (working memory), tool results, retrieved evidence,
memories, examples, known gaps. Instructions and policy form the system message; everything
else is data in the user message, each block delimited (\`<question>\`, \`<evidence>\`, \`<tool_result>\`,
\`<memory>\`, …) with tag look-alikes inside it neutralised, so a document, a tool result or a memory cannot close its
block or change the instructions. Each section records its trust level, source refs, freshness and tokens.

Tokens are counted by \`estimateTokenizer\` (documented in \`src/context/tokens.ts\`: letters by fours, digits by
threes, other letters and symbols one each; it errs high against OpenAI's BPE) unless a real tokenizer is plugged
in: \`context: { tokenizer: { name, count } }\`. For OpenAI models \`gpt-tokenizer\` (pure JavaScript, o200k and
cl100k encodings, no WebAssembly) is a good choice: \`count: (text) => encode(text).length\`.

The packet's options are \`answer(question, { context })\` (over a subclass's \`contextOptions()\`; on the command
line \`--max-tokens\` and \`--context FILE\` with the same JSON): \`maxTokens\`, \`reservedForOutput\`, \`tokenizer\`,
\`minScore\` (evidence below it is omitted as \`not_relevant\`), \`maxEvidence\`, \`requireCompleteEvidence\`, \`clarifyUnderPressure\`,
\`defaultTrustLevel\`, and the extra sections \`policies\`, \`goal\`, \`toolResults\` (\`{ name, content, trustLevel? }\`,
\`untrusted\` by default), \`memories\` (\`{ id, content, trustLevel?, updatedAt? }\`), \`examples\` and \`exclusions\`.

The budget is \`maxTokens\` (8000 by default) less \`reservedForOutput\` (1000). Pinned sections (instructions,
policy, the request, the goal) are never dropped. Evidence is fitted by diversity (every source's best chunk before
any source's second), then relevance, then freshness; whatever did not fit is recorded as \`over_budget\`. The
builder says how it degraded: \`fewer_sources\`, \`truncated_context\` (the one bulky piece shortened when nothing
fitted whole), \`clarifying_question\` (with \`clarifyUnderPressure\`: whole sources did not fit, so the user is asked
to narrow the question), \`refusal\` (the pinned sections alone exceed the budget) or \`escalation\`
(\`requireCompleteEvidence\` and something had to go). The last three end the run as \`refused\` without calling the
model; the stop reason says which. (A stricter re-retrieval and a model-written summary of bulky context are not
among them yet.)

A real packet, for a support agent of tenant \`acme\` on 1 June 2026, over this corpus:

\`\`\`jsonl
${blocks.corpus}
\`\`\`

\`\`\`text
${blocks.packet}
\`\`\`

Globex's document and the finance-only one were filtered out inside the search, so they are not even listed; the
2024 policy was retrieved and then omitted as stale; the billing desk's contact details were redacted before
inclusion. (The X200 sheets are in the packet because the local hashing embedder's vector list returns every
document; \`context: { minScore }\` or a post-processor such as \`AdaptiveThreshold\` keeps weak matches out.) The user
message the model received, rendered from the stored packet:

\`\`\`text
${blocks.message}
\`\`\`

## The answer contract

\`status\` is one of:

- \`answered\`: from cited evidence. Sentences that state something without a \`[n]\` citation are listed in
  \`uncitedSentences\` (and warned about in the trace).
- \`missing_evidence\`: nothing eligible (above \`context.minScore\`, when set) supports an answer. The model is
  **not called**.
- \`conflicting_evidence\`: eligible sources disagree, found from metadata: two \`version\`s of one \`documentKey\`
  (neither superseding the other), or the same key of \`facts\` with different values, among the sources that bear
  on the question (each shares a word with it). Both are cited and the model is not called. With
  \`conflictCheck: 'model'\` and a chat model, the model is also asked, against a JSON schema
  (\`{"conflict": true, "key", "claims": [{"label", "value"}]}\`), when the metadata shows no conflict; a reply off
  the schema counts as no conflict and is warned about in the trace.
- \`refused\`: a \`guardrail\` returned a reason, or the budget refused, escalated or asked a clarifying question.

Every answer also carries \`citations\`, \`evidenceRefs\` (the ids in the packet, in label order), \`omitted\` (ref,
reason, detail), \`stopReason\` and the \`packet\` itself.

A refusal for missing evidence:

\`\`\`text
${blocks.missing}
\`\`\`

A conflict:

\`\`\`text
${blocks.conflict}
\`\`\`

## Traces, stored and versioned

Every \`axon ask\` appends its run to \`traces.jsonl\` in the store's folder (\`JsonlTraceStore\`; any \`TraceStore\`
can be passed as \`traceStore\` to \`answer\`/\`stream\`, or returned by a subclass's \`traceStore()\`). A stored trace
holds the question, the caller (ids and time only), the filter, the retrieved ids and scores, the packet, the omitted
refs, the citations, the status and the stop reason, and the pipeline's version: a hash of the configuration (secret
fields left out), the embedding model and dimensions, the chat model, every pre- and post-processor with its prompt
version, the hash of the citation rules, the packet's policy version and tokenizer, and a hash of the eligibility
policy. The packet renders (\`renderMessages\`) to exactly the messages the model was given. Keys never appear, and
\`pii\` text appears only redacted.

\`axon trace <run-id>\` (a unique prefix is enough) and \`axon trace --last\` show a run:

\`\`\`text
${blocks.trace}
\`\`\`

\`axon trace --diff <a> <b>\` names what changed between two runs. Here the same question was asked again with
\`--now 2027-02-01\`, when the 2026 policy had gone stale too:

\`\`\`text
${blocks.diff}
\`\`\`

A list of documents that differs (retrieved, evidence, omitted, citations) is printed as what only one run has and
whether the shared ones moved, each document named \`source#chunk\`; \`--json\` gives the lists of ids as they are,
with \`sources\` naming them.

A stored pipeline run also keeps the stage labels (\`sources\`: id → \`source:page#chunk\`), which \`axon trace\` and
\`axon serve\` name documents by. A document dropped in favour of another (a copy of its content, one MMR found too
similar to a selected one) records that one as \`keptId\` beside the reason, and printouts name it: \`same content as
another document (kept: docs/refund-2026.jsonl#0)\`.

The store keeps agentic runs too (\`axon ask --agentic\`, the *Agentic* box of \`axon serve\`, or any
\`AgenticRetriever\` run given \`traceStore\`): a \`StoredAgenticTrace\` with \`kind: 'agentic'\`, the question and caller,
every step's closing event (a pipeline search's step with that search's stage records), the results with their
provenance and the text retrieval returned (after eligibility and redaction), the answer with its span citations,
the retrievers with their filters and search settings, the rounds, sub-queries and searches, and what is known of
the version (the chat model, the configuration hash). \`TraceStore\` reads and writes both kinds (\`StoredRun\`);
\`isAgenticTrace(trace)\` tells them apart.

## OpenTelemetry

Every run is an \`axon.run\` span with one child span per stage (\`axon.embed\`, \`axon.search\`, \`axon.fusion\`,
\`axon.dedupe\`, \`axon.post-process\`, \`axon.eligibility\`, \`axon.context\`, \`axon.generate\`), reported through
\`@opentelemetry/api\` under the tracer name \`axon-rag\`. Without an SDK installed by the application these are
no-ops. Attributes are the run id, the stage and component, and counts (\`axon.input_count\`, \`axon.output_count\`,
\`axon.dropped_count\`, \`axon.warning_count\`, \`axon.query_count\`; on the run: \`axon.status\`,
\`axon.evidence_count\`, \`axon.citation_count\`, \`axon.omitted_count\`); the span's own start and end are the
timings. The question and document text are never attributes. A stage that throws ends its span and the run's as
errors, with the exception recorded.

## From code

\`\`\`ts
import { ContextBuilder, renderMessages } from 'axon-rag/context';

const packet = new ContextBuilder({ maxTokens: 4000, reservedForOutput: 500 })
  .systemInstruction('You answer questions about our refund policy.')
  .policy('Never promise a refund date.')
  .userRequest('How long do refunds take?')
  .toolResult({ name: 'order-lookup', content: 'Order 1042 was paid by card.' })
  .evidence([{ id: 'refund-2026', content: 'Refunds take 14 days.', sourceType: 'file', sourceName: 'refunds.md', score: 0.9, metadata: {} }])
  .build();
console.log(packet.sections.map((section) => \`\${section.kind} \${section.trustLevel} \${section.tokens}\`));
console.log(renderMessages(packet)[0].content);
\`\`\`

With a \`RAG\`, pass the caller and the packet's options to \`answer\` or \`stream\`:

\`\`\`ts
import { EmbeddedRAG } from 'axon-rag/config';

const rag = new EmbeddedRAG({ directory: '.axon' });
const answer = await rag.answer('How long do refunds take?', {
  caller: { tenantId: 'acme', roles: ['support'], now: new Date('2026-06-01') },
  context: { maxTokens: 4000, policies: ['Never promise a refund date.'] },
  guardrail: ({ question }) => (/password/i.test(question) ? 'credentials are not discussed here' : undefined),
});
console.log(answer.status, answer.citations, answer.omitted);
\`\`\`
`;
}

if (import.meta.filename === process.argv[1]) {
  const text = await generateContextDoc();
  await writeFile(join(import.meta.dirname, '..', 'docs', 'context.md'), text);
  console.log('wrote docs/context.md');
}
