import { describe, expect, it } from 'vitest';
import type { Document } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { finalEvent, runStages, runStagesToEnd } from '../../src/pipeline/runner.ts';
import { insertStage, type Stage, type StageEntry } from '../../src/pipeline/stage.ts';
import { TraceRecorder } from '../../src/pipeline/trace.ts';

interface State {
  documents: Document[];
  log: string[];
}

const doc = (id: string, score: number): Document => ({ id, content: id, sourceType: 'test', sourceName: `${id}.md`, score, metadata: {} });

function keepTop(name: string, count: number): Stage<State> {
  return {
    kind: 'post-process',
    name,
    input: (state) => ({ documents: state.documents }),
    run(state, step) {
      for (const dropped of state.documents.slice(count)) step.drop(dropped.id, `beyond ${count}`);
      state.log.push(name);
      return { ...state, documents: state.documents.slice(0, count) };
    },
    output: (state) => ({ documents: state.documents }),
  };
}

async function drain<State, Event>(stages: readonly StageEntry<State, Event>[], state: State, signal = new AbortController().signal) {
  const recorder = new TraceRecorder('question', 'run-1');
  const events: unknown[] = [];
  const run = runStages(stages, state, recorder, signal);
  let step = await run.next();
  while (!step.done) {
    events.push(step.value);
    step = await run.next();
  }
  return { events, state: step.value, trace: recorder.trace };
}

describe('runStages', () => {
  it('runs stages in order, yields each record as it finishes and returns the last state', async () => {
    const initial: State = { documents: [doc('a', 0.9), doc('b', 0.8), doc('c', 0.1)], log: [] };
    const { events, state, trace } = await drain([keepTop('top-2', 2), keepTop('top-1', 1)], initial);
    expect(state.documents.map((document) => document.id)).toEqual(['a']);
    expect(state.log).toEqual(['top-2', 'top-1']);
    expect(events).toEqual(trace.stages.map((record) => ({ type: 'stage', record })));
    expect(trace.stages.map(({ stage, name, inputIds, outputIds, dropped }) => ({ stage, name, inputIds, outputIds, dropped }))).toEqual([
      { stage: 'post-process', name: 'top-2', inputIds: ['a', 'b', 'c'], outputIds: ['a', 'b'], dropped: [{ id: 'c', reason: 'beyond 2' }] },
      { stage: 'post-process', name: 'top-1', inputIds: ['a', 'b'], outputIds: ['a'], dropped: [{ id: 'b', reason: 'beyond 1' }] },
    ]);
    expect(trace.stages.every((record) => typeof record.ms === 'number' && record.ms >= 0)).toBe(true);
    expect(trace.sources).toEqual({ a: 'a.md', b: 'b.md', c: 'c.md' });
  });

  it('records warnings and detail, skips stages that do not apply, and expands groups when the run reaches them', async () => {
    const group: StageEntry<State> = {
      kind: 'search',
      name: 'search',
      expand: (state) => state.documents.map((document) => ({ kind: 'search' as const, name: `search:${document.id}`, run: (current: State) => current })),
    };
    const noted: Stage<State> = {
      kind: 'dedupe',
      name: 'noted',
      run(state, step) {
        step.warn('careful');
        step.detail({ first: 1 });
        step.detail({ second: 2 });
        return state;
      },
    };
    const skipped: Stage<State> = { kind: 'embed', name: 'skipped', applies: () => false, run: () => Promise.reject(new Error('must not run')) };
    const { trace } = await drain([keepTop('top-2', 2), skipped, group, noted], { documents: [doc('a', 1), doc('b', 1), doc('c', 1)], log: [] });
    expect(trace.stages.map((record) => record.name)).toEqual(['top-2', 'search:a', 'search:b', 'noted']);
    expect(trace.stages[3]).toMatchObject({ warnings: ['careful'], detail: { first: 1, second: 2 } });
  });

  it('yields what a streaming stage yields before its record, and an optional stage may leave no record', async () => {
    const streaming: Stage<State, { type: 'delta'; text: string }> = {
      kind: 'generate',
      name: 'writer',
      async *run(state) {
        yield { type: 'delta', text: 'Hello' };
        yield { type: 'delta', text: ' world' };
        return state;
      },
    };
    const quiet: Stage<State, { type: 'delta'; text: string }> = {
      kind: 'eligibility',
      name: 'quiet',
      optional: true,
      run(state, step) {
        step.discard();
        return state;
      },
    };
    const { events, trace } = await drain([quiet, streaming], { documents: [], log: [] });
    expect(events.map((event) => ((event as { type: string }).type === 'delta' ? (event as { text: string }).text : 'stage'))).toEqual([
      'Hello',
      ' world',
      'stage',
    ]);
    expect(trace.stages.map((record) => record.name)).toEqual(['writer']);
  });

  it('runStagesToEnd keeps the same records without handing them out, and drains a streaming stage', async () => {
    const streaming: Stage<State, { type: 'delta'; text: string }> = {
      kind: 'generate',
      name: 'writer',
      async *run(state) {
        yield { type: 'delta', text: 'Hello' };
        return { ...state, log: [...state.log, 'written'] };
      },
    };
    const recorder = new TraceRecorder('question');
    const initial: State = { documents: [doc('a', 0.9), doc('b', 0.8)], log: [] };
    const state = await runStagesToEnd([keepTop('top-1', 1), streaming], initial, recorder, new AbortController().signal);
    expect(state.log).toEqual(['top-1', 'written']);
    expect(recorder.trace.stages.map((record) => `${record.name}:${record.outputIds.join(',')}`)).toEqual(['top-1:a', 'writer:']);
  });

  it('refuses a discard from a stage that is not optional', async () => {
    const loud: Stage<State> = {
      kind: 'dedupe',
      name: 'loud',
      run(state, step) {
        step.discard();
        return state;
      },
    };
    const error = await drain([loud], { documents: [], log: [] }).catch((caught: unknown) => caught);
    expect(AxonError.hasCode(error, 'INTERNAL')).toBe(true);
  });

  it('cancels between stages and lets a stage error through unchanged', async () => {
    const controller = new AbortController();
    const aborting: Stage<State> = {
      kind: 'dedupe',
      name: 'aborting',
      run(state) {
        controller.abort();
        return state;
      },
    };
    const aborted = await drain([aborting, keepTop('next', 1)], { documents: [], log: [] }, controller.signal).catch((caught: unknown) => caught);
    expect(AxonError.hasCode(aborted, 'ABORTED')).toBe(true);
    expect((aborted as AxonError).component).toBe('aborting');

    const failure = new Error('reranker down');
    const failing: Stage<State> = { kind: 'post-process', name: 'failing', run: () => Promise.reject(failure) };
    const recorder = new TraceRecorder('question');
    const run = runStages([keepTop('first', 1), failing], { documents: [doc('a', 1)], log: [] }, recorder, new AbortController().signal);
    await expect(finalEvent(run, () => undefined, 'test', 'never')).rejects.toBe(failure);
    expect(recorder.trace.stages.map((record) => record.name)).toEqual(['first']);
  });
});

describe('finalEvent', () => {
  it('returns the first value picked, and says a stream without one is a bug', async () => {
    async function* events() {
      yield 1;
      yield 2;
    }
    expect(await finalEvent(events(), (value) => (value === 2 ? 'two' : undefined), 'test', 'has-two')).toBe('two');
    const missing = await finalEvent(events(), () => undefined, 'test', 'has-three').catch((caught: unknown) => caught);
    expect(missing).toMatchObject({ code: 'INTERNAL', details: { invariant: 'has-three' } });
  });
});

describe('insertStage', () => {
  const list = [
    { kind: 'pre-process', name: 'rewrite' },
    { kind: 'embed', name: 'embedder' },
    { kind: 'post-process', name: 'threshold' },
    { kind: 'post-process', name: 'mmr' },
    { kind: 'eligibility', name: 'eligibility' },
  ];
  const added = { kind: 'condense', name: 'added' };
  const names = (entries: { name: string }[]) => entries.map((entry) => entry.name);

  it('inserts before or after an entry found by name, then by kind', () => {
    expect(names(insertStage(list, { before: 'pre-process' }, added))).toEqual(['added', 'rewrite', 'embedder', 'threshold', 'mmr', 'eligibility']);
    expect(names(insertStage(list, { after: 'threshold' }, added))).toEqual(['rewrite', 'embedder', 'threshold', 'added', 'mmr', 'eligibility']);
    // After a kind is after the last of its run: after every post-processor.
    expect(names(insertStage(list, { after: 'post-process' }, added))).toEqual(['rewrite', 'embedder', 'threshold', 'mmr', 'added', 'eligibility']);
    expect(names(list)).toEqual(['rewrite', 'embedder', 'threshold', 'mmr', 'eligibility']);
  });

  it('puts stages at the start or the end when no entry matches, and refuses a malformed position', () => {
    const withoutPre = list.slice(1);
    expect(names(insertStage(withoutPre, { before: 'pre-process' }, added))[0]).toBe('added');
    expect(names(insertStage(withoutPre, { after: 'generate' }, added)).at(-1)).toBe('added');
    expect(() => insertStage(list, {} as never, added)).toThrow(/before/);
  });
});
