import { describe } from 'vitest';
import { AzureOpenAIChat } from '../../providers/azure/azure-openai-chat.ts';
import { AzureOpenAIEmbeddings } from '../../providers/azure/azure-openai-embeddings.ts';
import { describeChatConformance } from '../../testing/chat.ts';
import { describeEmbeddingsConformance } from '../../testing/embeddings.ts';

// Runs against a real Azure OpenAI resource only when AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT are set, with
// AZURE_OPENAI_CHAT_DEPLOYMENT and/or AZURE_OPENAI_EMBEDDINGS_DEPLOYMENT naming deployments; skipped otherwise.
const configured = Boolean(process.env.AZURE_OPENAI_API_KEY && process.env.AZURE_OPENAI_ENDPOINT);
const chatDeployment = process.env.AZURE_OPENAI_CHAT_DEPLOYMENT;
const embeddingsDeployment = process.env.AZURE_OPENAI_EMBEDDINGS_DEPLOYMENT;

describe.skipIf(!configured || !embeddingsDeployment)('live: Azure OpenAI embeddings', () => {
  describeEmbeddingsConformance(() => new AzureOpenAIEmbeddings({ deployment: embeddingsDeployment ?? '', maxBatchSize: 8 }), { live: true });
});

describe.skipIf(!configured || !chatDeployment)('live: Azure OpenAI chat', () => {
  describeChatConformance(() => new AzureOpenAIChat({ deployment: chatDeployment ?? '', temperature: 0 }), { live: true });
});
