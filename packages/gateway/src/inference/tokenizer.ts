/**
 * Server-side token counting with a real BPE tokenizer (gpt-tokenizer, whose rank
 * files ship inside the npm package, so it works offline). Special-token strings in
 * caller text are counted as ordinary text: a caller must not be able to make the
 * tokenizer throw, nor smuggle in control tokens.
 */
export type TokenizerName = 'o200k_base' | 'cl100k_base';
export const TOKENIZER_NAMES: readonly TokenizerName[] = ['o200k_base', 'cl100k_base'];

export interface Tokenizer {
  readonly name: TokenizerName;
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}

interface Encoding {
  encode(text: string, opts?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: Iterable<number>): string;
}

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const loaded = new Map<TokenizerName, Promise<Tokenizer>>();

async function importEncoding(name: TokenizerName): Promise<Encoding> {
  // Literal specifiers, so bundlers and type checkers see both modules.
  return name === 'cl100k_base'
    ? await import('gpt-tokenizer/encoding/cl100k_base')
    : await import('gpt-tokenizer/encoding/o200k_base');
}

/** The tokenizer by name; its rank table (a few MB) is loaded once, on first use. */
export function loadTokenizer(name: TokenizerName): Promise<Tokenizer> {
  let p = loaded.get(name);
  if (!p) {
    p = importEncoding(name).then((enc) => ({
      name,
      encode: (text: string) => enc.encode(text, NO_SPECIAL),
      count: (text: string) => (text === '' ? 0 : enc.encode(text, NO_SPECIAL).length),
      decode: (tokens: readonly number[]) => enc.decode(tokens),
    }));
    loaded.set(name, p);
  }
  return p;
}
