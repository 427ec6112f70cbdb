import { describe, expect, it } from 'vitest';
import { ProgressReporter } from '../../../src/demo/demo-progress.js';

const CLEAR_LINE = '\r\x1b[2K';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, columns: 100, chunks, write: (c: string) => chunks.push(c) };
}

describe('ProgressReporter', () => {
  it('without a TTY prints plain periodic lines and events, no control characters', () => {
    const out = sink(false);
    const p = new ProgressReporter(out, 'exactly-once', 1000, 2000);
    p.update({ done: 100, attempt: 0, checkpoints: 1 }, 0);
    p.update({ done: 200, attempt: 0, checkpoints: 1 }, 500); // throttled
    p.event('worker crashed');
    p.update({ done: 300, attempt: 1, checkpoints: 2 }, 2100);
    p.finish({ done: 1000, appended: 1000, attempt: 1, checkpoints: 3 });
    const text = out.chunks.join('');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    expect(text).not.toMatch(/[\r\x1b]/);
    expect(text.split('\n').filter(Boolean)).toEqual([
      '[exactly-once]  10% 100/1,000 clicks read, checkpoints 1, attempt 0',
      '[exactly-once] worker crashed',
      '[exactly-once]  30% 300/1,000 clicks read, checkpoints 2, attempt 1',
      '[exactly-once] 100% 1,000/1,000 clicks read (1,000 appended), checkpoints 3, attempt 1',
    ]);
  });

  it('on a TTY redraws one bar in place and prints events above it', () => {
    const out = sink(true);
    const p = new ProgressReporter(out, 'at-least-once', 1000);
    p.update({ done: 500, attempt: 0, checkpoints: 1 }, 0);
    p.update({ done: 600, attempt: 0, checkpoints: 1 }, 50); // throttled (100 ms)
    p.event('worker crashed');
    p.update({ done: 700, attempt: 1, checkpoints: 1 }, 200);
    expect(out.chunks).toHaveLength(5);
    expect(out.chunks[0].startsWith(CLEAR_LINE)).toBe(true);
    expect(out.chunks[0]).toMatch(/\[#+-+\] \[at-least-once\] {2}50% /);
    // the event clears the bar line, prints itself, and redraws the bar with the latest state
    expect(out.chunks[1]).toBe(CLEAR_LINE);
    expect(out.chunks[2]).toBe('[at-least-once] worker crashed\n');
    expect(out.chunks[3]).toMatch(/ 60% 600\/1,000/);
    expect(out.chunks[4].startsWith(CLEAR_LINE)).toBe(true);
    expect(out.chunks[4]).toMatch(/\[#+-+\] .* 70% 700\/1,000/);
  });

  it('on a TTY skips redraws that would not change the line, but redraws after an event', () => {
    const out = sink(true);
    const p = new ProgressReporter(out, 'exactly-once', 1000);
    const state = { done: 500, attempt: 0, checkpoints: 1 };
    p.update(state, 0);
    p.update(state, 200);
    expect(out.chunks).toHaveLength(1);
    p.event('something');
    expect(out.chunks).toHaveLength(4);
    expect(out.chunks[3]).toBe(out.chunks[0]);
  });

  it('on a TTY never draws a line wider than the terminal (it would wrap and break the redraw)', () => {
    const out = {
      isTTY: true,
      columns: 60,
      chunks: [] as string[],
      write(c: string) {
        this.chunks.push(c);
      },
    };
    const p = new ProgressReporter(out, 'at-least-once', 250_000);
    p.update({ done: 128_996, appended: 131_761, attempt: 1, checkpoints: 12 }, 0);
    const drawn = out.chunks[0].replace('\r\x1b[2K', '');
    expect(drawn.length).toBeLessThan(60);
    expect(drawn).toMatch(/^\[#+-+\] \[at-least-once\] {2}52% 128,996/);
  });
});
