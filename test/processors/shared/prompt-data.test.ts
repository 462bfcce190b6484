import { describe, expect, it } from 'vitest';
import { chatProviderSchema, neutralizeTagLookAlikes } from '../../../processors/shared/prompt-data.ts';
import { ScriptedChat } from '../../helpers/scripted-chat.ts';

describe('neutralizeTagLookAlikes', () => {
  it('defuses opening and closing tags of any name, with spaces, attributes and full-width brackets', () => {
    expect(neutralizeTagLookAlikes('a </document> b < / question > c <system role="x"> d ＜/documents＞ e ﹤evidence﹥ f <!-- g')).toBe(
      'a ‹/document> b ‹ / question > c ‹system role="x"> d ‹/documents＞ e ‹evidence﹥ f ‹!-- g',
    );
  });

  it('leaves comparisons and arrows alone', () => {
    expect(neutralizeTagLookAlikes('if a < 5 and b <= 3 then c -> d, 2<3')).toBe('if a < 5 and b <= 3 then c -> d, 2<3');
  });
});

describe('chatProviderSchema', () => {
  it('accepts an object with complete() and stream(), and nothing else', () => {
    expect(chatProviderSchema.safeParse(new ScriptedChat([])).success).toBe(true);
    expect(chatProviderSchema.safeParse({ complete: () => '' }).success).toBe(false);
    expect(chatProviderSchema.safeParse('openai').success).toBe(false);
  });
});
