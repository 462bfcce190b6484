'use client';
// app/page.tsx — a chat page whose answers show Axon's sources, with no glue: the source parts arrive in the
// message, each with Axon's citation (its [n] label and the spans of the answer that cite it) as metadata.
import { useChat } from '@ai-sdk/react';
import { type FormEvent, useState } from 'react';
import type { AxonSourceMetadata, AxonUIMessage } from '../../../providers/ai-sdk/index.ts';

export default function Page() {
  const { messages, sendMessage, status } = useChat<AxonUIMessage>();
  const [input, setInput] = useState('');

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (input.trim() === '') return;
    void sendMessage({ text: input });
    setInput('');
  }

  return (
    <main style={{ maxWidth: 720, margin: '2rem auto', fontFamily: 'system-ui' }}>
      {messages.map((message) => (
        <section key={message.id}>
          <strong>{message.role === 'user' ? 'You' : 'Axon'}</strong>
          {message.parts.map((part, index) => {
            const key = `${message.id}-${index}`;
            if (part.type === 'text') return <p key={key}>{part.text}</p>;
            if (part.type === 'source-url' || part.type === 'source-document') {
              const citation = part.providerMetadata?.axon as unknown as AxonSourceMetadata | undefined;
              const label = citation ? `[${citation.label}] ` : '';
              const cited = citation?.spans.map((span) => span.text).join(' … ');
              return (
                <p key={key} title={cited} style={{ fontSize: '0.85em' }}>
                  {label}
                  {part.type === 'source-url' ? <a href={part.url}>{part.title ?? part.url}</a> : part.title}
                </p>
              );
            }
            return null;
          })}
          {message.metadata && message.metadata.status !== 'answered' ? <em>{message.metadata.status.replace('_', ' ')}</em> : null}
        </section>
      ))}
      <form onSubmit={submit}>
        <input value={input} onChange={(event) => setInput(event.currentTarget.value)} placeholder="Ask the documents" disabled={status !== 'ready'} />
      </form>
    </main>
  );
}
