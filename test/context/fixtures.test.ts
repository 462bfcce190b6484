import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedRAG } from '../../app/config/embedded-rag.ts';
import type { CallerContext } from '../../src/context/eligibility.ts';
import { renderMessages, type ContextPacket, type OmissionReason, type SectionKind } from '../../src/context/packet.ts';
import type { JsonValue } from '../../src/document.ts';
import type { ContextOptions } from '../../src/rag.ts';
import { runAxon } from '../helpers/cli.ts';

/**
 * The SPEC §7 eval fixtures (test/fixtures/context/*.json), each run through the library and through the CLI
 * (`axon ingest` of JSON Lines, then `axon ask --json --explain` and `axon trace --json`), checked the same way.
 */
interface Fixture {
  description: string;
  question: string;
  caller?: { tenant?: string; roles?: string[]; now?: string };
  context?: ContextOptions;
  documents: ({ ref: string; text: string } & Record<string, JsonValue>)[];
  expect: {
    status: string;
    must_cite?: string[];
    must_not_cite?: string[];
    /** Exactly these document omissions (refs and reasons), when given. */
    omitted?: { ref: string; reason: OmissionReason }[];
    /** Every omission has one of these reasons, and there is at least one. */
    omitted_reasons?: OmissionReason[];
    packet_must_not_contain?: string[];
    packet_must_contain?: string[];
    instructions_unchanged?: boolean;
    sections?: { kind: SectionKind; trustLevel: string }[];
    pinned?: SectionKind[];
    min_evidence?: number;
    max_tokens_used?: number;
    degradations?: string[];
  };
}

/** What both paths produce, in the fixtures' terms (documents by ref). */
interface Outcome {
  status: string;
  cited: string[];
  omitted: { ref: string; reason: OmissionReason }[];
  packet: ContextPacket;
}

const FIXTURES = join(import.meta.dirname, '../fixtures/context');
const fixtures: [string, Fixture][] = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((file) => [file.replace(/\.json$/, ''), JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Fixture]);

const refOf = (sourceName: string | undefined, fallback: string) => (sourceName ? basename(sourceName).replace(/\.jsonl$/, '') : fallback);
const systemMessage = (packet: ContextPacket) => renderMessages(packet)[0].content;

let root: string;
let baselineSystem: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-context-fixtures-'));
  // The instructions every fixture without policies must leave untouched: a clean run's system message.
  const rag = new EmbeddedRAG({ directory: join(root, 'baseline') });
  await rag.addDocuments([{ content: 'Refunds are processed within 14 days of the request.', sourceType: 'file', sourceName: 'docs/clean.jsonl' }]);
  baselineSystem = systemMessage((await rag.answer('How many days until refunds are processed?')).packet);
  await rag.close();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function callerOf(fixture: Fixture): CallerContext | undefined {
  if (!fixture.caller) return undefined;
  const caller: CallerContext = {};
  if (fixture.caller.tenant) caller.tenantId = fixture.caller.tenant;
  if (fixture.caller.roles) caller.roles = fixture.caller.roles;
  if (fixture.caller.now) caller.now = new Date(fixture.caller.now);
  return caller;
}

async function throughLibrary(name: string, fixture: Fixture): Promise<Outcome> {
  const rag = new EmbeddedRAG({ directory: join(root, `library-${name}`) });
  await rag.addDocuments(
    fixture.documents.map(({ text, ...fields }) => ({
      content: text,
      sourceType: 'file',
      sourceName: `docs/${fields.ref}.jsonl`,
      metadata: { ...fields, recordIndex: 0, lineNumber: 1 },
    })),
  );
  const answer = await rag.answer(fixture.question, { caller: callerOf(fixture), context: fixture.context });
  await rag.close();
  return {
    status: answer.status,
    cited: answer.citations.map((citation) => refOf(citation.sourceName, citation.id)),
    omitted: answer.omitted.map((entry) => ({ ref: refOf(entry.sourceName, entry.ref), reason: entry.reason })),
    packet: answer.packet,
  };
}

async function throughCli(name: string, fixture: Fixture): Promise<Outcome> {
  const directory = join(root, `cli-${name}`);
  await mkdir(join(directory, 'docs'), { recursive: true });
  for (const { ref, ...fields } of fixture.documents) await writeFile(join(directory, 'docs', `${ref}.jsonl`), `${JSON.stringify({ ref, ...fields })}\n`);
  const ingest = await runAxon(directory, ['ingest', 'docs']);
  expect(ingest.code, ingest.stderr).toBe(0);
  const argv = ['ask', fixture.question, '--json', '--explain'];
  if (fixture.caller?.tenant) argv.push('--tenant', fixture.caller.tenant);
  for (const role of fixture.caller?.roles ?? []) argv.push('--role', role);
  if (fixture.caller?.now) argv.push('--now', fixture.caller.now);
  if (fixture.context) {
    await writeFile(join(directory, 'context.json'), JSON.stringify(fixture.context));
    argv.push('--context', 'context.json');
  }
  const ask = await runAxon(directory, argv);
  expect(ask.code, ask.stderr).toBe(0);
  const output = JSON.parse(ask.stdout);
  for (const field of ['runId', 'status', 'answer', 'citations', 'evidenceRefs', 'omitted']) expect(output, `--json has ${field}`).toHaveProperty(field);
  for (const citation of output.citations) expect(typeof citation.sourceName).toBe('string');

  // The stored trace, read back by a unique prefix, holds exactly the packet the run built.
  const trace = await runAxon(directory, ['trace', output.runId.slice(0, 8), '--json']);
  expect(trace.code, trace.stderr).toBe(0);
  const stored = JSON.parse(trace.stdout);
  expect(stored.packet).toEqual(output.packet);
  expect(stored.status).toBe(output.status);

  return {
    status: output.status,
    cited: output.citations.map((citation: { sourceName: string; id: string }) => refOf(citation.sourceName, citation.id)),
    omitted: output.omitted.map((entry: { ref: string; reason: OmissionReason; sourceName?: string }) => ({
      ref: refOf(entry.sourceName, entry.ref),
      reason: entry.reason,
    })),
    packet: output.packet,
  };
}

function check(fixture: Fixture, outcome: Outcome): void {
  const { expect: expected } = fixture;
  const { packet } = outcome;
  expect(outcome.status).toBe(expected.status);
  for (const ref of expected.must_cite ?? []) expect(outcome.cited, `cites ${ref}`).toContain(ref);
  if (expected.must_cite?.length === 0) expect(outcome.cited).toEqual([]);
  for (const ref of expected.must_not_cite ?? []) expect(outcome.cited, `does not cite ${ref}`).not.toContain(ref);

  // Whatever must not be cited must not be in the packet at all, so the model never saw it.
  const evidenceRefs = packet.sections
    .filter((section) => section.kind === 'retrieved_evidence')
    .map((section) => section.title.replace(/^\[\d+\] /, '').replace(/ \(truncated\)$/, ''));
  for (const ref of expected.must_not_cite ?? []) expect(evidenceRefs.map((title) => refOf(title, title))).not.toContain(ref);

  const documentRefs = new Set(fixture.documents.map((document) => document.ref));
  const omittedDocuments = outcome.omitted.filter((entry) => documentRefs.has(entry.ref));
  if (expected.omitted) expect(omittedDocuments).toEqual(expected.omitted);
  if (expected.omitted_reasons) {
    expect(omittedDocuments.length).toBeGreaterThan(0);
    for (const entry of omittedDocuments) expect(expected.omitted_reasons).toContain(entry.reason);
  }

  const rendered = renderMessages(packet)
    .map((message) => message.content)
    .join('\n');
  for (const text of expected.packet_must_not_contain ?? []) expect(rendered, `packet holds "${text}"`).not.toContain(text);
  for (const text of expected.packet_must_contain ?? []) expect(rendered).toContain(text);
  if (expected.instructions_unchanged) {
    expect(systemMessage(packet)).toBe(baselineSystem);
    // Each data block is closed exactly once: no closing tag inside the data survived neutralisation.
    const user = renderMessages(packet)[1].content;
    expect(user.match(/<\/evidence>/g)?.length ?? 0).toBe(packet.sections.filter((section) => section.kind === 'retrieved_evidence').length);
    expect(user.match(/<\/tool_result>/g)?.length ?? 0).toBe(packet.sections.filter((section) => section.kind === 'tool_result').length);
    expect(user.match(/<\/memory>/g)?.length ?? 0).toBe(packet.sections.filter((section) => section.kind === 'memory').length);
    // Data comes after every instruction: the first data section follows the last instruction section.
    const kinds = packet.sections.map((section) => section.kind);
    expect(kinds.lastIndexOf('policy')).toBeLessThan(kinds.indexOf('user_request'));
  }
  for (const section of expected.sections ?? []) expect(packet.sections).toContainEqual(expect.objectContaining(section));
  if (expected.pinned) expect(packet.sections.filter((section) => section.pinned).map((section) => section.kind)).toEqual(expected.pinned);
  if (expected.min_evidence !== undefined) expect(evidenceRefs.length).toBeGreaterThanOrEqual(expected.min_evidence);
  if (expected.max_tokens_used !== undefined) expect(packet.budget.used).toBeLessThanOrEqual(expected.max_tokens_used);
  if (expected.degradations) expect(packet.degradations.map((degradation) => degradation.kind)).toEqual(expected.degradations);
  if (!packet.degradations.some((item) => item.kind === 'refusal'))
    expect(packet.budget.used).toBeLessThanOrEqual(packet.budget.maxTokens - packet.budget.reservedForOutput);
}

describe('context fixtures', () => {
  it('has at least 20 fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(20);
  });

  describe.each(fixtures)('%s', (name, fixture) => {
    it('through the library', async () => {
      check(fixture, await throughLibrary(name, fixture));
    });

    it('through the CLI', async () => {
      check(fixture, await throughCli(name, fixture));
    }, 30_000);
  });
});
