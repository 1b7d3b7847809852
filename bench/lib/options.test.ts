import { describe, expect, it } from 'vitest';
import { failureText, parseOptions, UsageError } from './options.ts';

describe('parseOptions', () => {
  it('takes --report as a file to print again and runs nothing else', () => {
    expect(parseOptions(['--report', 'bench/results/latest.json']).report).toBe('bench/results/latest.json');
    expect(parseOptions([]).report).toBeNull();
  });

  it('refuses --perf-pair without --perf instead of ignoring it', () => {
    expect(() => parseOptions(['--perf-pair', 'paidrecord:paidfloor'])).toThrow(UsageError);
    expect(parseOptions(['--perf', '--perf-pair', 'paidrecord:paidfloor']).perfPair).toEqual({
      subject: 'paidrecord',
      baseline: 'paidfloor',
    });
  });

  it('refuses a bad number as a usage error', () => {
    expect(() => parseOptions(['--rounds', 'x'])).toThrow(UsageError);
  });
});

describe('failureText', () => {
  it('prints a usage error as its message alone', () => {
    expect(failureText(new UsageError('--report: cannot read x (ENOENT)'))).toBe(
      '--report: cannot read x (ENOENT)',
    );
  });

  it("prints parseArgs' own refusal as its message alone", () => {
    let caught: unknown;
    try {
      parseOptions(['--bogus']);
    } catch (e) {
      caught = e;
    }
    expect(failureText(caught)).toBe("Unknown option '--bogus'");
  });

  it('prints anything else with its stack', () => {
    const e = new Error('boom');
    expect(failureText(e)).toBe(e.stack);
  });
});
