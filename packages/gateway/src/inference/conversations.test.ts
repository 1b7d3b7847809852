import { describe, expect, it } from 'vitest';
import { addItemsSchema, createConversationSchema, turnSchema } from './conversations.ts';

describe('conversation input', () => {
  it('refuses NUL characters in text that is stored (PostgreSQL cannot keep them)', () => {
    expect(createConversationSchema.safeParse({ title: 'a\u0000' }).success).toBe(false);
    expect(createConversationSchema.safeParse({ metadata: { k: 'v\u0000' } }).success).toBe(false);
    expect(addItemsSchema.safeParse({ items: [{ role: 'user', content: '\u0000' }] }).success).toBe(false);
    expect(turnSchema.safeParse({ content: 'hi\u0000' }).success).toBe(false);
    expect(turnSchema.safeParse({ content: 'hi' }).success).toBe(true);
  });
});
