import { describe, expect, it } from 'vitest';
import { buildTarget, parseBase } from './forward-target.ts';

describe('parseBase', () => {
  it('splits origin and base path, dropping trailing slashes', () => {
    expect(parseBase('https://api.example.com/v2/', false)).toEqual({
      origin: 'https://api.example.com',
      basePath: '/v2',
    });
    expect(parseBase('https://api.example.com:8443', false)).toEqual({
      origin: 'https://api.example.com:8443',
      basePath: '',
    });
    expect(parseBase('http://[::1]:9000/x', true)).toEqual({ origin: 'http://[::1]:9000', basePath: '/x' });
  });

  it.each([
    ['https://u:p@api.example.com/', 'invalid_base_url'],
    ['https://api.example.com/?k=1', 'invalid_base_url'],
    ['https://api.example.com/#f', 'invalid_base_url'],
    ['not a url', 'invalid_base_url'],
    ['ftp://api.example.com/', 'scheme_not_allowed'],
    ['http://api.example.com/', 'scheme_not_allowed'],
  ])('fails closed on %s', (raw, problem) => {
    expect(parseBase(raw, false)).toBe(problem);
  });

  it('allows http only with allowPrivate, even for a base seen before without it', () => {
    expect(parseBase('http://127.0.0.1:1/', false)).toBe('scheme_not_allowed');
    expect(parseBase('http://127.0.0.1:1/', true)).toEqual({ origin: 'http://127.0.0.1:1', basePath: '' });
    expect(parseBase('http://127.0.0.1:1/', false)).toBe('scheme_not_allowed');
  });
});

describe('buildTarget', () => {
  it('keeps the query untouched without query auth', () => {
    expect(buildTarget('/v1', 'a', 'x=1&&y=%20&x=2', null)).toBe('/v1/a?x=1&&y=%20&x=2');
    expect(buildTarget('', 'a', '', null)).toBe('/a');
  });

  it('drops every client spelling of the auth parameter and appends the real one', () => {
    const auth = { name: 'api key', secret: 'a&b=c' };
    expect(buildTarget('', 'p', 'api+key=1&api%20key=2&api%2520key=3&other=4', auth)).toBe(
      '/p?api%2520key=3&other=4&api%20key=a%26b%3Dc',
    );
    // a name that is not valid percent-encoding is compared literally
    expect(buildTarget('', 'p', '%E0%A4%A=1', { name: 'k', secret: 's' })).toBe('/p?%E0%A4%A=1&k=s');
  });
});
