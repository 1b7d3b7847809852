/**
 * What a chat request may carry. Anything the upstream would tokenize but the quote
 * cannot count (images, audio, files, hosted tools, legacy function calling) is a
 * 400 `invalid_request` naming the parameter, before any 402.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { contentText, parseChatRequest } from './chat-request.ts';

const parse = (body: unknown) => parseChatRequest(Buffer.from(JSON.stringify(body)));
const user = { role: 'user', content: 'hi' };

/** The ApiError a body is refused with. */
function refusal(body: unknown): ApiError {
  try {
    parse(body);
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('the body was accepted');
}

describe('chat request refusals name the parameter', () => {
  it.each([
    [
      'image parts',
      [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
    ],
    [
      'audio parts',
      [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
    ],
    ['file parts', [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }]],
    [
      'refusal parts outside assistant messages',
      [{ role: 'user', content: [{ type: 'refusal', refusal: 'no' }] }],
    ],
  ])('%s cannot be priced: 400 at the part', (_name, messages) => {
    const e = refusal({ model: 'm', messages });
    expect(e.code).toBe('invalid_request');
    expect(e.extra.param).toBe('messages.0.content.0.type');
    expect(e.message).toMatch(/image, audio and file parts cannot be priced/);
  });

  it('refuses hosted tools, whose results and fees the quote cannot count', () => {
    const e = refusal({ model: 'm', messages: [user], tools: [{ type: 'web_search_preview' }] });
    expect(e.code).toBe('invalid_request');
    expect(e.extra.param).toBe('tools.0.type');
    expect(e.message).toMatch(/function tools/);
  });

  it('refuses unknown keys inside a tool definition', () => {
    const e = refusal({
      model: 'm',
      messages: [user],
      tools: [{ type: 'function', function: { name: 'f', extra: 'x'.repeat(1000) } }],
    });
    expect(e.extra.param).toBe('tools.0.function.extra');
  });

  it.each([
    ['functions', { functions: [{ name: 'f', parameters: {} }] }, 'functions', /tools/],
    ['function_call', { function_call: 'auto' }, 'function_call', /tool_choice/],
  ])('refuses legacy %s with a pointer to its replacement', (_name, extra, param, hint) => {
    const e = refusal({ model: 'm', messages: [user], ...extra });
    expect(e.code).toBe('invalid_request');
    expect(e.extra.param).toBe(param);
    expect(e.message).toMatch(hint);
  });

  it('refuses a legacy assistant function_call at the message field', () => {
    const e = refusal({
      model: 'm',
      messages: [user, { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }],
    });
    expect(e.extra.param).toBe('messages.1.function_call');
    expect(e.message).toMatch(/tool_calls/);
  });

  it('refuses the legacy function role', () => {
    const e = refusal({ model: 'm', messages: [{ role: 'function', name: 'f', content: '{}' }] });
    expect(e.extra.param).toBe('messages.0.role');
  });
});

describe('chat request content', () => {
  it('accepts refusal parts in assistant messages and reads them as text', () => {
    const req = parse({
      model: 'm',
      messages: [
        user,
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Well, ' },
            { type: 'refusal', refusal: 'no.' },
          ],
        },
      ],
    });
    expect(contentText(req.messages[1]!.content)).toBe('Well, no.');
  });
});
