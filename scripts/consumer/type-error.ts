// Must NOT type-check: proves the installed declarations are real types, not `any`.
import type { RAG } from 'axon-rag';
import { AdaptiveThreshold } from 'axon-rag/processors';

const threshold = new AdaptiveThreshold({ multiplier: 'high' });
const answer = await ({} as RAG).answer('question');
const text: number = answer.text;
console.log(threshold, text);
