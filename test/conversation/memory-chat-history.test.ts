import { MemoryChatHistory } from '../../src/conversation/memory-chat-history.ts';
import { describeChatHistoryConformance } from '../../testing/chat-history.ts';

describeChatHistoryConformance('memory-chat-history', async () => ({ history: new MemoryChatHistory() }));
