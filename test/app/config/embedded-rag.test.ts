import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EmbeddedRAG } from '../../../app/config/embedded-rag.ts';

describe('EmbeddedRAG over a folder that does not exist', () => {
  it('says the folder does not exist, naming it, and creates nothing', async () => {
    const rag = new EmbeddedRAG({ directory: '/nonexistent/x/y' });
    await expect(rag.answer('When does the office open?')).rejects.toMatchObject({
      code: 'INDEX_EMPTY',
      message: expect.stringMatching(/^\[axon\] \[file-store\] The store's folder \/nonexistent\/x\/y does not exist, so there is nothing to search\. /),
      details: { directory: '/nonexistent/x/y', exists: false },
    });
    expect(existsSync('/nonexistent')).toBe(false);
  });
});
