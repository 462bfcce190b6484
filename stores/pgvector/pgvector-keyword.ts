/**
 * The pgvector store's keyword search in SQL: the columns a row carries for it (terms from Axon's tokenizer,
 * their counts and the document's length) and the statement that ranks rows by BM25 as `Bm25Index` does.
 */
import type { TextTokenizer } from '../indexes/text-tokenizer.ts';
import { isPostgresText, type SqlParameters } from './pgvector-filter.ts';

/** Longest lexeme a tsvector holds, in bytes. */
const MAX_LEXEME_BYTES = 2046;

/** The keyword columns of a row: each term's count as JSON (the lexemes are its keys) and the length in terms. */
export function keywordColumns(tokenizer: TextTokenizer, content: string): { frequencies: string; length: number } {
  const analyzed = tokenizer.analyze(content);
  const counts: Record<string, number> = Object.create(null);
  for (const term of analyzed.terms) if (isLexeme(term)) counts[term] = (counts[term] ?? 0) + 1;
  return { frequencies: JSON.stringify(counts), length: analyzed.length };
}

/** The terms of a query that a tsvector can hold, each with how often the query repeats it. */
export function queryTermWeights(tokenizer: TextTokenizer, query: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const term of tokenizer.tokenize(query)) if (isLexeme(term)) weights.set(term, (weights.get(term) ?? 0) + 1);
  return weights;
}

/** What a keyword search statement ranks, and over which rows. */
export interface KeywordQuery {
  /** The table, quoted. */
  table: string;
  /** A `WHERE …` clause from the filter, or empty; its values already in `parameters`. */
  where: string;
  parameters: SqlParameters;
  /** The query's terms and their weights (`queryTermWeights`), not empty. */
  weights: Map<string, number>;
  k1: number;
  b: number;
  topK: number;
}

/**
 * The statement that returns the `topK` rows best matching the query's terms by BM25, best first (ties by id),
 * each with the document's columns (`selectColumns`, over the alias `document`) and its `score`.
 */
export function keywordSearchStatement(query: KeywordQuery, selectColumns: string): string {
  const { table, where, parameters, weights } = query;
  const terms = [...weights.keys()];
  const termList = parameters.add(terms, 'text[]');
  const weightList = parameters.add([...weights.values()], 'float8[]');
  const termQueries = parameters.add(terms.map(tsqueryTerm), 'text[]');
  const anyTerm = parameters.add(terms.map(tsqueryTerm).join(' | '), 'tsquery');
  const k1 = parameters.add(query.k1, 'float8');
  const b = parameters.add(query.b, 'float8');
  const limit = parameters.add(query.topK, 'integer');
  const filtered = where === '' ? `WHERE keyword_lexemes @@ ${anyTerm}` : `${where} AND keyword_lexemes @@ ${anyTerm}`;
  // idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)); tf / (tf + k1 · (1 − b + b · |d| / avgdl)), as Bm25Index.
  // Scores are summed per id over narrow rows; only the topK winners are joined back for their columns.
  // MATERIALIZED: computed once, not inlined into the join, where the document-frequency subquery would run per row.
  return (
    `WITH collection AS MATERIALIZED (SELECT count(*)::float8 AS documents, avg(keyword_length)::float8 AS average_length FROM ${table}), ` +
    `query_terms AS MATERIALIZED (SELECT term, weight, (SELECT count(*) FROM ${table} WHERE keyword_lexemes @@ term_query::tsquery)::float8 AS frequency ` +
    `FROM unnest(${termList}, ${weightList}, ${termQueries}) AS given(term, weight, term_query)), ` +
    `candidates AS (SELECT id, keyword_frequencies, keyword_length FROM ${table} ${filtered}), ` +
    `scored AS (SELECT candidates.id, ` +
    `sum(query_terms.weight * ln(1 + (collection.documents - query_terms.frequency + 0.5) / (query_terms.frequency + 0.5)) * ` +
    `(candidates.keyword_frequencies ->> query_terms.term)::float8 / ((candidates.keyword_frequencies ->> query_terms.term)::float8 + ` +
    `${k1} * (1 - ${b} + ${b} * candidates.keyword_length / collection.average_length))) AS score ` +
    `FROM candidates CROSS JOIN collection JOIN query_terms ON candidates.keyword_frequencies ? query_terms.term ` +
    `GROUP BY candidates.id ORDER BY score DESC, candidates.id LIMIT ${limit}) ` +
    `SELECT ${selectColumns}, scored.score ` +
    `FROM scored JOIN ${table} AS document ON document.id = scored.id ORDER BY scored.score DESC, scored.id`
  );
}

// --- Internal helpers ---

/** Terms a tsvector can hold: not empty, at most 2046 bytes, text Postgres can store. */
function isLexeme(term: string): boolean {
  return term.length > 0 && Buffer.byteLength(term) <= MAX_LEXEME_BYTES && isPostgresText(term);
}

/** A term as a quoted tsquery operand: the literal is data for the tsquery parser (a parameter), never SQL. */
function tsqueryTerm(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
