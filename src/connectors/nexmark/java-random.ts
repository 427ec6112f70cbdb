/**
 * `java.util.Random` bit for bit: the 48-bit linear congruential generator Beam's Nexmark
 * generator seeds once per event (`new Random(eventId)`), so the events here equal Beam's for
 * the same configuration wherever the draws are the same.
 *
 * The 48-bit state is kept as two 24-bit halves in plain numbers: every intermediate product
 * stays below 2^53, so the arithmetic is exact without BigInt (which would cost an allocation per
 * draw on the generator's hot path). Cost: a handful of multiplications per draw.
 */

const MULT_HI = 0x5de; // 0x5DEECE66D = MULT_HI * 2^24 + MULT_LO
const MULT_LO = 0xece66d;
const TWO_24 = 0x1000000;
const INV_TWO_24 = 1 / TWO_24;
const TWO_31 = 0x80000000;
const TWO_32 = 0x100000000;

export class JavaRandom {
  /** Upper 24 bits of the 48-bit seed. */
  #hi = 0;
  /** Lower 24 bits of the 48-bit seed. */
  #lo = 0;

  /** `seed` must be a safe non-negative integer below 2^48 (event ids are). */
  constructor(seed: number) {
    this.setSeed(seed);
  }

  /** `(seed ^ 0x5DEECE66D) & (2^48 - 1)`, as `java.util.Random.setSeed`. */
  setSeed(seed: number): void {
    const lo = seed % TWO_24;
    const hi = Math.floor(seed / TWO_24) % TWO_24;
    this.#lo = (lo ^ MULT_LO) >>> 0;
    this.#hi = (hi ^ MULT_HI) >>> 0;
  }

  /** The next `bits` (1 … 32) random bits as Java's `next(bits)`: a signed 32-bit int. */
  next(bits: number): number {
    // seed = seed * 0x5DEECE66D + 0xB mod 2^48, on 24-bit halves; no `%` on doubles (fmod is slow)
    const p = this.#lo * MULT_LO + 0xb;
    const carry = Math.floor(p * INV_TWO_24);
    const lo = p - carry * TWO_24;
    const q = this.#hi * MULT_LO + this.#lo * MULT_HI + carry;
    const hi = q - Math.floor(q * INV_TWO_24) * TWO_24;
    this.#lo = lo;
    this.#hi = hi;
    // (int) (seed >>> (48 - bits)): both halves fit in 24 bits, so int32 shifts are exact; the
    // `<<` wrapping past bit 31 is Java's truncation to int.
    const shift = 48 - bits;
    return shift >= 24 ? hi >>> (shift - 24) : (hi << (24 - shift)) | (lo >>> shift);
  }

  nextInt(): number {
    return this.next(32);
  }

  /** Uniform in [0, bound), Java's algorithm (rejection for non-powers of two). */
  nextIntBounded(bound: number): number {
    if ((bound & -bound) === bound) {
      return Math.floor((bound * this.next(31)) / TWO_31);
    }
    let bits: number;
    let val: number;
    do {
      bits = this.next(31);
      val = bits % bound;
    } while (bits - val + (bound - 1) >= TWO_31);
    return val;
  }

  /** Java's `nextLong()` as a number; exact only while the value is a safe integer. */
  nextLong(): number {
    const hi = this.next(32);
    const lo = this.next(32);
    return hi * TWO_32 + lo;
  }

  /** Uniform in [0, 1) with 53 random bits, as Java's `nextDouble()`. */
  nextDouble(): number {
    return (this.next(26) * 2 ** 27 + this.next(27)) * 2 ** -53;
  }
}
