import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The direction of the code, read from the import graph of the library: every import (static, dynamic,
// type-only, re-export) between units points down, and there is no cycle between files or between folders.

/**
 * The layers, bottom first. A file may import its own unit, an earlier unit of its layer (when the layer is
 * ordered) and any lower layer; never a later unit or a higher layer. The units of an `independent` layer may
 * not import each other at all. A file belongs to the longest unit that is a prefix of its path.
 */
const LAYERS: readonly Layer[] = [
  {
    name: 'base',
    units: ['src/errors.ts', 'src/document.ts', 'src/filter', 'src/contracts', 'src/runtime', 'src/text'],
  },
  {
    name: 'core',
    units: [
      // The runner, the trace, fusion, de-duplication, MMR: below what they run.
      'src/pipeline',
      'src/context',
      'src/answer',
      // Chat history windows and the condense logic, which a condense stage runs.
      'src/conversation',
      // The stages of a run, which use the context packet and the answer builders.
      'src/stages',
      'src/rag.ts',
      'src/retrieval',
      'src/agentic',
      'src/eval',
      'src/ingest',
      'src/index.ts',
    ],
  },
  { name: 'adapters', units: ['processors', 'stores', 'providers', 'testing'], independent: true },
  { name: 'composition', units: ['app/config', 'app/entries', 'app/serve', 'app/cli'] },
];

/**
 * Imports the rules refuse but that are allowed for now, each with the reason and what removes it. An exception
 * no import needs any more fails the test, so the list only shrinks.
 */
const TEMPORARY_EXCEPTIONS: readonly { from: string; to: string; reason: string }[] = [];

/** The library's top-level folders (what ships), read for imports. Tests, benchmarks and scripts are not. */
const LIBRARY_ROOTS = ['src', 'app', 'processors', 'stores', 'providers', 'testing'];

interface Layer {
  name: string;
  units: readonly string[];
  independent?: boolean;
}

/** One import: `from` and `to` are paths from the repository root; `type` when it imports types only. */
interface ImportEdge {
  from: string;
  to: string;
  type: boolean;
}

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

describe('architecture: the import graph', () => {
  const files = libraryFiles(root);
  const edges = importGraph(root, files);

  it('reads the whole library, type imports and dynamic imports included', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(edges.some((edge) => edge.type)).toBe(true);
    // The composition root loads providers on demand: those imports are edges too.
    expect(edges.some((edge) => edge.from === 'app/config/built-ins.ts' && edge.to.startsWith('providers/'))).toBe(true);
  });

  it('places every library file in a layer', () => {
    expect(files.filter((file) => unitOf(file) === undefined)).toEqual([]);
  });

  it('has no import that points up or sideways between adapters', () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it('has no cycle between files', () => {
    expect(cycles(edges.map((edge) => [edge.from, edge.to]))).toEqual([]);
  });

  it('has no cycle between folders', () => {
    expect(cycles(edges.map((edge) => [folderOf(edge.from), folderOf(edge.to)] as const).filter(([from, to]) => from !== to))).toEqual([]);
  });

  it('keeps every temporary exception in use', () => {
    const unused = TEMPORARY_EXCEPTIONS.filter((exception) => !edges.some((edge) => edge.from === exception.from && edge.to === exception.to));
    expect(unused.map((exception) => `${exception.from} -> ${exception.to}: no longer imported; remove it from TEMPORARY_EXCEPTIONS`)).toEqual([]);
  });
});

describe('architecture: the checks themselves', () => {
  it('name the import and the rule it breaks', () => {
    expect(
      layerViolations([
        { from: 'src/context/packet.ts', to: 'src/rag.ts', type: true },
        { from: 'src/errors.ts', to: 'src/pipeline/trace.ts', type: false },
        { from: 'stores/memory/memory-store.ts', to: 'providers/local/hash-embeddings.ts', type: false },
        { from: 'processors/post/cohere-reranker.ts', to: 'providers/cohere/cohere-rerank.ts', type: false },
        { from: 'src/rag.ts', to: 'app/config/create-rag.ts', type: false },
        { from: 'src/rag.ts', to: 'test/helpers/scripted-chat.ts', type: false },
        { from: 'src/rag.ts', to: 'src/unplaced/thing.ts', type: false },
        { from: 'src/agentic/run.ts', to: 'src/context/outcome.ts', type: false },
      ]),
    ).toEqual([
      `src/context/packet.ts imports src/rag.ts (type import): src/context may not import src/rag.ts, which comes after it in core (order: ${LAYERS[1].units.join(', ')})`,
      'src/errors.ts imports src/pipeline/trace.ts: base may not import core, a higher layer (base ← core ← adapters ← composition)',
      'stores/memory/memory-store.ts imports providers/local/hash-embeddings.ts: adapters never import each other (stores may not import providers)',
      'processors/post/cohere-reranker.ts imports providers/cohere/cohere-rerank.ts: adapters never import each other (processors may not import providers)',
      'src/rag.ts imports app/config/create-rag.ts: core may not import composition, a higher layer (base ← core ← adapters ← composition)',
      'src/rag.ts imports test/helpers/scripted-chat.ts: the library may only import the library (test/helpers/scripted-chat.ts is outside src, app, processors, stores, providers, testing)',
      'src/rag.ts imports src/unplaced/thing.ts: src/unplaced/thing.ts is in no layer (place its folder in LAYERS, test/architecture.test.ts)',
    ]);
  });

  it('find cycles between files and folders', () => {
    expect(
      cycles([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
        ['e', 'e'],
      ]),
    ).toEqual(['a -> b -> c -> a', 'e -> e']);
    expect(folderOf('src/agentic/run.ts')).toBe('src/agentic');
    expect(folderOf('stores/indexes/simd/space-layout.ts')).toBe('stores/indexes');
    expect(folderOf('src/rag.ts')).toBe('src/rag.ts');
  });
});

// --- Internal helpers ---

function libraryFiles(base: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(base, folder))) {
      const path = `${folder}/${entry}`;
      if (statSync(join(base, path)).isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) found.push(path);
    }
  };
  for (const folder of LIBRARY_ROOTS) walk(folder);
  return found.sort();
}

/** Every relative import of every file: static, dynamic (`import('…')`), type-only and re-exports alike. */
function importGraph(base: string, files: string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(join(base, file), 'utf8');
    const typeOnly = typeOnlySpecifiers(file, text);
    for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const target = resolveImport(base, file, imported.fileName);
      edges.push({ from: file, to: target, type: typeOnly.has(imported.fileName) });
    }
  }
  return edges;
}

/** The specifiers this file imports only as types (`import type`, `export type … from`), for the messages. */
function typeOnlySpecifiers(file: string, text: string): Set<string> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const types = new Set<string>();
  const values = new Set<string>();
  for (const statement of source.statements) {
    const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier)) continue;
    const typeOnly = ts.isImportDeclaration(statement) ? statement.importClause?.isTypeOnly === true : statement.isTypeOnly;
    (typeOnly ? types : values).add(specifier.text);
  }
  for (const value of values) types.delete(value);
  return types;
}

function resolveImport(base: string, file: string, specifier: string): string {
  const path = relative(base, resolve(base, dirname(file), specifier));
  if (existsSync(join(base, path)) && statSync(join(base, path)).isFile()) return path;
  for (const candidate of [path.replace(/\.js$/, '.ts'), `${path}.ts`, `${path}/index.ts`]) if (existsSync(join(base, candidate))) return candidate;
  return path;
}

/**
 * The folder a file counts in for folder cycles: the second level of the tree (`src/agentic`, `stores/indexes`,
 * `app/cli`), with what is nested deeper (`stores/indexes/simd`, `app/cli/commands`) as part of it; a file at the
 * first level (`src/rag.ts`, `stores/index.ts`) stands for itself.
 */
function folderOf(file: string): string {
  const segments = file.split('/');
  return segments.length <= 2 ? file : segments.slice(0, 2).join('/');
}

function unitOf(file: string): { layer: number; unit: number } | undefined {
  let best: { layer: number; unit: number; length: number } | undefined;
  LAYERS.forEach((layer, layerIndex) =>
    layer.units.forEach((unit, unitIndex) => {
      const matches = file === unit || file.startsWith(`${unit}/`);
      if (matches && (best === undefined || unit.length > best.length)) best = { layer: layerIndex, unit: unitIndex, length: unit.length };
    }),
  );
  return best;
}

/** Every import the layer rules refuse, as a sentence naming the import and the rule. */
function layerViolations(edges: readonly ImportEdge[]): string[] {
  const violations: string[] = [];
  const chain = LAYERS.map((layer) => layer.name).join(' ← ');
  for (const edge of edges) {
    if (TEMPORARY_EXCEPTIONS.some((exception) => exception.from === edge.from && exception.to === edge.to)) continue;
    const what = `${edge.from} imports ${edge.to}${edge.type ? ' (type import)' : ''}`;
    const from = unitOf(edge.from);
    const to = unitOf(edge.to);
    if (from === undefined) continue;
    if (to === undefined) {
      const inLibrary = LIBRARY_ROOTS.some((folder) => edge.to.startsWith(`${folder}/`));
      violations.push(
        inLibrary
          ? `${what}: ${edge.to} is in no layer (place its folder in LAYERS, test/architecture.test.ts)`
          : `${what}: the library may only import the library (${edge.to} is outside ${LIBRARY_ROOTS.join(', ')})`,
      );
      continue;
    }
    const fromLayer = LAYERS[from.layer];
    const fromUnit = fromLayer.units[from.unit];
    const toUnit = LAYERS[to.layer].units[to.unit];
    if (to.layer > from.layer) {
      violations.push(`${what}: ${fromLayer.name} may not import ${LAYERS[to.layer].name}, a higher layer (${chain})`);
    } else if (to.layer === from.layer && from.unit !== to.unit) {
      if (fromLayer.independent) {
        violations.push(`${what}: ${fromLayer.name} never import each other (${fromUnit} may not import ${toUnit})`);
      } else if (to.unit > from.unit) {
        violations.push(`${what}: ${fromUnit} may not import ${toUnit}, which comes after it in ${fromLayer.name} (order: ${fromLayer.units.join(', ')})`);
      }
    }
  }
  return violations;
}

/** Each cycle of the graph once (Tarjan's strongly connected components), as `a -> b -> … -> a`. */
function cycles(edges: readonly (readonly [string, string])[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)!.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || next.get(node)?.has(node)) found.push(describeCycle(component.sort(), next));
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort();
}

/** The shortest cycle through the component's first member (breadth first): the import chain to fix. */
function describeCycle(component: string[], next: Map<string, Set<string>>): string {
  const members = new Set(component);
  const start = component[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const target of [...(next.get(current) ?? [])].sort()) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let step: string | undefined = current; step !== start && step !== undefined; step = cameFrom.get(step)) path.splice(1, 0, step);
        return [...path, start].join(' -> ');
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, current);
        queue.push(target);
      }
    }
  }
  return component.join(' -> ');
}
