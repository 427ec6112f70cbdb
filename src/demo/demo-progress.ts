/**
 * The demo's progress display on stderr. On a TTY: one bar redrawn in place (at most every
 * 100 ms), with event lines (crash, restart, …) printed above it. Otherwise (CI, a pipe, a log
 * file): a plain line every `plainIntervalMs` and the event lines, no control characters.
 */

export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(chunk: string): unknown;
}

export interface ProgressState {
  /** Input records read so far (rewinds after a restore). */
  readonly done: number;
  /** Input records appended so far (the demo's feed), when known. */
  readonly appended?: number;
  readonly attempt: number;
  readonly checkpoints: number;
}

export class ProgressReporter {
  readonly #out: ProgressStream;
  readonly #label: string;
  readonly #total: number;
  readonly #tty: boolean;
  readonly #plainIntervalMs: number;
  #lastDrawAt = Number.NEGATIVE_INFINITY;
  #barShown = false;
  #lastBar = '';
  #state: ProgressState = { done: 0, attempt: 0, checkpoints: 0 };

  constructor(out: ProgressStream, label: string, total: number, plainIntervalMs = 2000) {
    this.#out = out;
    this.#label = label;
    this.#total = total;
    this.#tty = out.isTTY === true;
    this.#plainIntervalMs = plainIntervalMs;
  }

  update(state: ProgressState, now = performance.now()): void {
    this.#state = state;
    if (now - this.#lastDrawAt < (this.#tty ? 100 : this.#plainIntervalMs)) return;
    this.#lastDrawAt = now;
    if (this.#tty) this.#drawBar();
    else this.#out.write(`${this.#line()}\n`);
  }

  /** Prints a line (above the bar on a TTY). */
  event(text: string): void {
    if (this.#tty && this.#barShown) {
      this.#out.write('\r\x1b[2K');
      this.#lastBar = ''; // cleared: the redraw below must happen
    }
    this.#out.write(`[${this.#label}] ${text}\n`);
    if (this.#tty && this.#barShown) this.#drawBar();
  }

  /** Final state; leaves the bar (or a last plain line) in place. */
  finish(state: ProgressState): void {
    this.#state = state;
    if (this.#tty) {
      this.#drawBar();
      this.#out.write('\n');
    } else {
      this.#out.write(`${this.#line()}\n`);
    }
    this.#barShown = false;
  }

  #fraction(): number {
    return this.#total > 0 ? Math.min(1, Math.max(0, this.#state.done / this.#total)) : 1;
  }

  #line(): string {
    const s = this.#state;
    const pct = (this.#fraction() * 100).toFixed(0).padStart(3);
    const appended = s.appended === undefined ? '' : ` (${s.appended.toLocaleString('en-US')} appended)`;
    return `[${this.#label}] ${pct}% ${s.done.toLocaleString('en-US')}/${this.#total.toLocaleString('en-US')} clicks read${appended}, checkpoints ${s.checkpoints}, attempt ${s.attempt}`;
  }

  #drawBar(): void {
    const columns = this.#out.columns ?? 80;
    const width = Math.max(10, Math.min(40, columns - this.#line().length - 4));
    // The line must not wrap: `\r` and clear-line only redraw the terminal's current row.
    const text = this.#line().slice(0, Math.max(0, columns - width - 4));
    const filled = Math.round(this.#fraction() * width);
    const bar = `\r\x1b[2K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${text}`;
    if (bar === this.#lastBar && this.#barShown) return;
    this.#out.write(bar);
    this.#lastBar = bar;
    this.#barShown = true;
  }
}
