import { describe, expect, it } from 'vitest';
import { AgenticRetriever, agenticConversationTurn, type AgenticEvent, type AgenticResult, type AgenticTraceEvent } from '../../src/agentic/index.ts';
import type { ConversationMessage } from '../../src/contracts/chat-history.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';
import { callKind, corpusRag, json, labelOf, twoHopCorpus } from './fixtures.ts';

// Agentic retrieval given a conversation as messages, as Bedrock's agentic retrieval takes them: the question is
// condensed with the turns before it (a traced step), the speculative search uses the condensed question, and the
// model planner is shown the conversation as delimited data.

const FIRST = 'Who played Corliss Archer in the film Kiss and Tell?';
const FOLLOW_UP = 'What government position did she hold?';
const messages: ConversationMessage[] = [
  { role: 'user', content: FIRST },
  { role: 'assistant', content: 'Shirley Temple played Corliss Archer in Kiss and Tell [1].' },
  { role: 'user', content: FOLLOW_UP },
];

async function collect(stream: AsyncIterable<AgenticEvent>): Promise<{ steps: AgenticTraceEvent[]; result: AgenticResult }> {
  const steps: AgenticTraceEvent[] = [];
  let result: AgenticResult | undefined;
  for await (const event of stream) {
    if (event.type === 'trace' && event.status !== 'inProgress') steps.push(event);
    if (event.type === 'result') result = event.result;
  }
  if (result === undefined) throw new Error('no result');
  return { steps, result };
}

/** The ids the speculative search found. */
function speculativeIds(step: AgenticTraceEvent): string[] {
  expect(step.step).toBe('speculativeRetrieval');
  return ((step.output?.searches ?? []) as { ids?: string[] }[]).flatMap((search) => search.ids ?? []);
}

describe('AgenticRetriever given messages', () => {
  it('condenses the follow-up offline and searches it speculatively, without a chat model', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag, maxResults: 4 }] });
    const { steps, result } = await collect(agent.stream(messages));
    expect(steps.map((step) => step.step).slice(0, 2)).toEqual(['condense', 'speculativeRetrieval']);
    const [condense, speculative] = steps;
    expect(condense.input).toEqual({ question: FOLLOW_UP, turns: 1 });
    expect(condense.output?.searchedQuestion).toMatch(/Shirley Temple/);
    expect(speculative.input.query).toBe(condense.output?.searchedQuestion);
    expect(result.question).toBe(FOLLOW_UP);
    expect(result.searchedQuestion).toBe(condense.output?.searchedQuestion);
    // Found at once by the name the condensed question carries.
    expect(speculativeIds(speculative)).toContain('temple');
  });

  it('searches the question alone, with no condense step, when given a string (as before)', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag, maxResults: 4 }] });
    const { steps, result } = await collect(agent.stream(FOLLOW_UP));
    expect(steps.map((step) => step.step)).not.toContain('condense');
    expect(steps[0].input.query).toBe(FOLLOW_UP);
    expect(result.searchedQuestion).toBeUndefined();
    expect(speculativeIds(steps[0])).not.toContain('temple');
  });

  it('with a chat model: the model rewrites, and the planner sees the conversation as data beside the condensed question', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const chat = new ScriptedChat((call) => {
      const kind = callKind(call);
      if (kind === 'plan') return json({ subQueries: [{ query: 'Shirley Temple Chief of Protocol', retriever: 'wiki' }] });
      if (kind === 'sufficiency') return json({ sufficient: true, missing: '' });
      if (call.messages[0].content.startsWith("Rewrite the user's latest question")) return 'What government position did Shirley Temple hold?';
      return `She served as Chief of Protocol of the United States [${labelOf(call.prompt, 'Chief of Protocol of the United States')}].`;
    });
    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag, maxResults: 3 }], chat });
    const { steps, result } = await collect(agent.stream(messages));
    expect(steps[0]).toMatchObject({ step: 'condense', output: { searchedQuestion: 'What government position did Shirley Temple hold?', method: 'model' } });
    expect(steps[1].input.query).toBe('What government position did Shirley Temple hold?');
    const plan = chat.calls.find((call) => callKind(call) === 'plan')!;
    expect(plan.messages[0].content).toMatch(/The question follows a conversation/);
    expect(plan.prompt).toMatch(
      /<conversation>[\s\S]*Shirley Temple played Corliss Archer[\s\S]*<\/conversation>[\s\S]*<question>\nWhat government position did Shirley Temple hold\?/,
    );
    expect(result.searchedQuestion).toBe('What government position did Shirley Temple hold?');
    expect(result.answer).toMatch(/Chief of Protocol/);
    // The rewrite is a model call of the run, counted in its usage.
    expect(result.usage.modelCalls).toBe(chat.calls.length);
  });

  it('refuses messages that do not end with the user question', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag }] });
    await expect(
      agent.run([
        { role: 'user', content: FIRST },
        { role: 'assistant', content: 'Shirley Temple.' },
      ]),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(agent.run([])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('agenticConversationTurn', () => {
  it('records the question, the question searched, the answer, and the results its spans cite, labelled by position', async () => {
    const rag = await corpusRag(twoHopCorpus);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag, maxResults: 3 }] });
    const result = await agent.run(messages);
    const turn = agenticConversationTurn(result, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z');
    expect(turn).toMatchObject({
      question: FOLLOW_UP,
      searchedQuestion: result.searchedQuestion,
      answer: result.answer ?? '',
      runId: result.runId,
      askedAt: '2026-01-01T00:00:00.000Z',
      answeredAt: '2026-01-01T00:00:01.000Z',
    });
    const cited = [...new Set(result.citations.flatMap((citation) => citation.references.map((reference) => reference.resultIndex)))].sort((a, b) => a - b);
    expect(cited.length).toBeGreaterThan(0);
    expect(turn.citations.map((citation) => [citation.label, citation.id])).toEqual(cited.map((index) => [index + 1, result.results[index].id]));
  });
});
