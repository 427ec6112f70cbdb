// Word count: `weir run examples/word-count.ts --parallelism 2 --arg lines=100000`
// Lines are generated deterministically from a sequence, so every run counts the same words.
import { defineJob, sinks, sources } from 'weir';

const WORDS = ['to', 'be', 'or', 'not', 'that', 'is', 'the', 'question', 'whether', 'tis', 'nobler'];

/** The line for sequence number `i`: 1 to 5 words picked by a fixed rule. */
export function lineFor(i: number): string {
  const n = 1 + (i % 5);
  const words: string[] = [];
  for (let k = 0; k < n; k++) words.push(WORDS[(i * 7 + k * 3) % WORDS.length]);
  return words.join(' ');
}

export default defineJob((env, args) => {
  env
    .fromSource(sources.sequence({ from: 0, to: Number(args.lines ?? 100_000) }), 'lines')
    .map((i: number) => lineFor(i))
    // biome-ignore lint/suspicious/useIterableCallbackReturn: DataStream.flatMap emits through `out`, it is not Array.flatMap
    .flatMap<{ word: string; count: number }>((line: string, _ctx, out) => {
      for (const w of line.split(' ')) out.collect({ word: w, count: 1 });
    })
    .name('tokenize')
    .keyBy((wc) => wc.word)
    .sum('count')
    .name('count')
    .sinkTo(args.sink === 'discard' ? sinks.discard() : sinks.collect('counts'));
});
