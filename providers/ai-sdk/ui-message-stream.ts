import { createUIMessageStream, createUIMessageStreamResponse, type InferUIMessageChunk, type UIMessage } from 'ai';
import type { Citation, Document } from '../../src/document.ts';
import type { Answer, RagEvent } from '../../src/rag.ts';

/** Where in the answer text a citation is used: `[startIndex, endIndex)`, the citing sentence through its `[n]`. */
export interface AxonCitationSpan {
  startIndex: number;
  endIndex: number;
  text: string;
}

/** What each source part carries under `providerMetadata.axon`. */
export interface AxonSourceMetadata {
  /** The `[n]` label the answer cites it by. */
  label: number;
  /** The chunk id. */
  documentId: string;
  sourceType: string;
  sourceName: string;
  pageNumber?: number;
  chunkIndex?: number;
  /** Every place the answer cites it. */
  spans: AxonCitationSpan[];
}

/** The message metadata of the `finish` part: how the run ended. */
export interface AxonMessageMetadata {
  runId: string;
  status: Answer['status'];
  stopReason: Answer['stopReason'];
  mode: Answer['mode'];
  truncated?: true;
}

/** One stage as it finished (sent only with `stages: true`, as a transient `data-axon-stage` part). */
export interface AxonStageData {
  stage: string;
  name: string;
  ms: number;
  outputCount: number;
  warnings: string[];
}

/** The UI message type of an Axon answer, for `useChat<AxonUIMessage>()`. */
export type AxonUIMessage = UIMessage<AxonMessageMetadata, { 'axon-stage': AxonStageData }>;

export interface AxonUIStreamOptions {
  /** The URL of a cited source, for a `source-url` part; without one, a `source-document` part. @default a `url` source's name, or `metadata.url` */
  sourceUrl?: (citation: Citation, document: Document | undefined) => string | undefined;
  /** Also send each finished stage, as a transient `data-axon-stage` part (not kept in the message). @default false */
  stages?: boolean;
  /** The text sent to the client when the run fails. @default the AI SDK's, which hides server details */
  onError?: (error: unknown) => string;
}

/**
 * Turn the events of `RAG.stream` into the AI SDK's UI message stream, which `useChat` reads: the answer's text
 * deltas as one text part, then one `source-url` or `source-document` part per cited source (in citation order),
 * each with Axon's citation (label, chunk, page, and the spans of the answer that cite it) under
 * `providerMetadata.axon`, and a `finish` part whose `messageMetadata` says how the run ended.
 */
export function toUIMessageStream(events: AsyncIterable<RagEvent>, options: AxonUIStreamOptions = {}): ReadableStream<InferUIMessageChunk<AxonUIMessage>> {
  return createUIMessageStream<AxonUIMessage>({
    ...(options.onError ? { onError: options.onError } : {}),
    execute: async ({ writer }) => {
      const textId = 'axon-answer';
      let textStarted = false;
      writer.write({ type: 'start' });
      for await (const event of events) {
        if (event.type === 'stage' && options.stages) {
          const { stage, name, ms, outputIds, warnings } = event.record;
          writer.write({ type: 'data-axon-stage', data: { stage, name, ms, outputCount: outputIds.length, warnings }, transient: true });
        } else if (event.type === 'delta') {
          if (!textStarted) writer.write({ type: 'text-start', id: textId });
          textStarted = true;
          writer.write({ type: 'text-delta', id: textId, delta: event.text });
        } else if (event.type === 'result') {
          const { answer } = event;
          // An extractive or refused answer streams no deltas: its text arrives whole with the result.
          if (!textStarted && answer.text !== '') {
            writer.write({ type: 'text-start', id: textId });
            writer.write({ type: 'text-delta', id: textId, delta: answer.text });
            textStarted = true;
          }
          if (textStarted) writer.write({ type: 'text-end', id: textId });
          for (const part of sourceParts(answer, options)) writer.write(part);
          const metadata: AxonMessageMetadata = { runId: answer.trace.runId, status: answer.status, stopReason: answer.stopReason, mode: answer.mode };
          if (answer.truncated) metadata.truncated = true;
          writer.write({ type: 'finish', messageMetadata: metadata });
        }
      }
    },
  });
}

/**
 * `toUIMessageStream` as a streaming `Response` (server-sent events with the AI SDK's UI stream header), what a
 * Next.js route handler returns to `useChat`.
 */
export function toUIMessageStreamResponse(
  events: AsyncIterable<RagEvent>,
  options: AxonUIStreamOptions & { headers?: Record<string, string>; status?: number } = {},
): Response {
  const { headers, status, ...streamOptions } = options;
  return createUIMessageStreamResponse({ stream: toUIMessageStream(events, streamOptions), ...(headers ? { headers } : {}), ...(status ? { status } : {}) });
}

/**
 * The spans of `text` that cite `label`: for each `[n]` (or `[n, m]`) naming it, from the start of the sentence it
 * follows to the end of the marker. A marker standing after the sentence's full stop belongs to that sentence.
 */
export function citationSpans(text: string, label: number): AxonCitationSpan[] {
  const spans: AxonCitationSpan[] = [];
  for (const match of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    if (!match[1].split(',').some((part) => Number(part.trim()) === label)) continue;
    const markerStart = match.index ?? 0;
    const endIndex = markerStart + match[0].length;
    const before = text
      .slice(0, markerStart)
      .replace(/(\s*\[\d+(?:\s*,\s*\d+)*\])+\s*$/, '')
      .replace(/[.!?]?\s*$/, '');
    let startIndex = 0;
    for (const boundary of before.matchAll(/[.!?]\s+|\n+/g)) startIndex = (boundary.index ?? 0) + boundary[0].length;
    spans.push({ startIndex, endIndex, text: text.slice(startIndex, endIndex) });
  }
  return spans;
}

// --- Internal helpers ---

function sourceParts(answer: Answer, options: AxonUIStreamOptions): InferUIMessageChunk<AxonUIMessage>[] {
  const byId = new Map(answer.documents.map((document) => [document.id, document]));
  return answer.citations.map((citation) => {
    const document = byId.get(citation.id);
    const axon: AxonSourceMetadata = {
      label: citation.label,
      documentId: citation.id,
      sourceType: citation.sourceType,
      sourceName: citation.sourceName,
      ...(citation.pageNumber === undefined ? {} : { pageNumber: citation.pageNumber }),
      ...(citation.chunkIndex === undefined ? {} : { chunkIndex: citation.chunkIndex }),
      spans: citationSpans(answer.text, citation.label),
    };
    // Provider metadata must be plain JSON values: the round trip drops the absent optional fields.
    const providerMetadata = { axon: JSON.parse(JSON.stringify(axon)) };
    const title = typeof document?.metadata.title === 'string' ? document.metadata.title : citationTitle(citation);
    const url = (options.sourceUrl ?? defaultSourceUrl)(citation, document);
    if (url !== undefined) return { type: 'source-url', sourceId: citation.id, url, title, providerMetadata };
    const mediaType = typeof document?.metadata.mediaType === 'string' ? document.metadata.mediaType : 'text/plain';
    return {
      type: 'source-document',
      sourceId: citation.id,
      mediaType,
      title,
      ...(citation.sourceType === 'file' && citation.sourceName !== '' ? { filename: citation.sourceName } : {}),
      providerMetadata,
    };
  });
}

function defaultSourceUrl(citation: Citation, document: Document | undefined): string | undefined {
  if (citation.sourceType === 'url' && /^https?:\/\//i.test(citation.sourceName)) return citation.sourceName;
  const url = document?.metadata.url;
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : undefined;
}

function citationTitle(citation: Citation): string {
  const page = citation.pageNumber === undefined ? '' : `, page ${citation.pageNumber}`;
  return `${citation.sourceName || citation.sourceType}${page}`;
}
