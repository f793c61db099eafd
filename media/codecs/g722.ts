/**
 * ITU-T G.722 (09/2012) at 64 kbit/s: 16 kHz audio as two sub-bands (sec. 1.2), the lower band in
 * 6-bit ADPCM and the higher band in 2-bit ADPCM, one octet per pair of input samples (sec. 1.4:
 * the higher band's two bits on top). Fixed-point arithmetic exactly as the standard's block
 * descriptions (sec. 3 encoder, sec. 4 decoder; tables 6-17), so the output is bit-exact with
 * other conforming implementations (checked against Debian's ffmpeg in g722.test.ts).
 *
 * Input and output are 16-bit PCM at 16 kHz; the standard's 14-bit signals sit in the top bits
 * (sec. 1.3), which is where the QMF scaling below puts them.
 */

/** Every other coefficient of the 24-tap QMF, h(0) h(2) ... h(22) (table 11); h is symmetric. */
const qmf = [3, -11, 12, 32, -210, 951, 3876, -805, 362, -156, 53, -11] as const;

/** Lower band: decision levels of the 6-bit quantizer (table 6, QUANTL), scaled by DETL / 4096. */
const q6 = [0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473, 530, 587, 650, 714, 786, 858, 940, 1023, 1121, 1219, 1339, 1458, 1612, 1765, 1980, 2195, 2557, 2919];
/** Code for a negative / non-negative difference in interval mil (table 6). */
const iln = [0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4];
const ilp = [0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32];
/** Inverse quantizer outputs: 4-bit for the predictor (table 7, QM4), 6-bit for the output (table 8, QM6). */
const qm4 = [0, -20456, -12896, -8968, -6288, -4240, -2584, -1200, 20456, 12896, 8968, 6288, 4240, 2584, 1200, 0];
const qm6 = [
  -136, -136, -136, -136, -24808, -21904, -19008, -16704, -14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856, -7192, -6576, -6000,
  -5456, -4944, -4464, -4008, -3576, -3168, -2776, -2400, -2032, -1688, -1360, -1040, -728, 24808, 21904, 19008, 16704, 14984, 13512,
  12280, 11192, 10232, 9360, 8576, 7856, 7192, 6576, 6000, 5456, 4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032, 1688, 1360, 1040, 728,
  432, 136, -432, -136,
];
/** Log scale factor multipliers by quantizer interval (table 9, RIL -> IL4 -> WL). */
const rl42 = [0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0];
const wl = [-60, -30, 58, 172, 334, 538, 1198, 3042];
/** Higher band: codes, inverse quantizer and log scale multipliers (tables 13-16). */
const ihn = [0, 1, 0];
const ihp = [0, 3, 2];
const qm2 = [-7408, -1616, 7408, 1616];
const rh2 = [2, 1, 2, 1];
const wh = [0, -214, 798];
/** Scale factor from the log domain, fractional part (table 17, ILB). */
const ilb = [
  2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435, 2489, 2543, 2599, 2656, 2714, 2774, 2834, 2896, 2960, 3025, 3091, 3158, 3228, 3298,
  3371, 3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008,
];

const sat = (v: number): number => (v > 32767 ? 32767 : v < -32768 ? -32768 : v);
/** The standard's sign test: the sign bit, so zero counts as positive. */
const sameSign = (a: number, b: number): boolean => a < 0 === b < 0;

/** One sub-band's adaptive predictor and scale factor (sec. 3.6 block 4, sec. 3.5 block 3). */
class Band {
  /** Predictor output s, its pole and zero parts. */
  s = 0;
  private sz = 0;
  /** Pole coefficients a1, a2 and zero coefficients b1..b6 (Q14). */
  private a1 = 0;
  private a2 = 0;
  private readonly b = new Int32Array(7);
  /** Quantized differences d(k-1)..d(k-6) (index 1..6), partial signals p and reconstructed r (index 1, 2). */
  private readonly d = new Int32Array(7);
  private p1 = 0;
  private p2 = 0;
  private r1 = 0;
  private r2 = 0;
  /** Log scale factor (NBL / NBH) and scale factor (DETL / DETH). */
  nb = 0;
  det: number;

  constructor(
    initialDet: number,
    private readonly nbMax: number,
    private readonly scaleShift: number,
  ) {
    this.det = initialDet;
  }

  /** LOGSCL + SCALEL (sec. 3.5): adapt the scale factor with the code's multiplier. */
  adaptScale(multiplier: number): void {
    let nb = ((this.nb * 32512) >> 15) + multiplier;
    if (nb < 0) nb = 0;
    else if (nb > this.nbMax) nb = this.nbMax;
    this.nb = nb;
    const fraction = ilb[(nb >> 6) & 31] as number;
    const shift = this.scaleShift - (nb >> 11);
    this.det = (shift < 0 ? fraction << -shift : fraction >> shift) << 2;
  }

  /** Block 4 (sec. 3.6): reconstruct, update the pole/zero predictor with d, predict the next s. */
  update(dq: number): void {
    const r = sat(this.s + dq);
    const p = sat(this.sz + dq);
    // UPPOL2: a2 += 2^-7 (sgn p.p2 - 4 a1 sgn p.p1), leaked by 2^-7, limited to 0.75.
    const wd1 = sat(this.a1 << 2);
    const wd32 = sameSign(p, this.p1) ? sat(-wd1) : wd1;
    let a2 = (sameSign(p, this.p2) ? 128 : -128) + (wd32 >> 7) + ((this.a2 * 32512) >> 15);
    a2 = a2 > 12288 ? 12288 : a2 < -12288 ? -12288 : a2;
    // UPPOL1: a1 += 3 * 2^-8 sgn p.p1, leaked by 2^-8, limited to 1 - 2^-4 - a2.
    let a1 = sat((sameSign(p, this.p1) ? 192 : -192) + ((this.a1 * 32640) >> 15));
    const limit = 15360 - a2;
    a1 = a1 > limit ? limit : a1 < -limit ? -limit : a1;
    this.a1 = a1;
    this.a2 = a2;
    // UPZERO: b_i += 2^-7 sgn d.d_i (nothing when d is 0), leaked by 2^-8.
    const step = dq === 0 ? 0 : 128;
    for (let i = 1; i <= 6; i++) {
      const b = this.b[i] as number;
      this.b[i] = sat((sameSign(dq, this.d[i] as number) ? step : -step) + ((b * 32640) >> 15));
    }
    // DELAYA / DELAYZ: shift the histories.
    for (let i = 6; i > 1; i--) this.d[i] = this.d[i - 1] as number;
    this.d[1] = dq;
    this.p2 = this.p1;
    this.p1 = p;
    this.r2 = this.r1;
    this.r1 = r;
    // FILTEZ, FILTEP, PREDIC: the zero part over d, the pole part over r.
    let sz = 0;
    for (let i = 6; i > 0; i--) sz += ((this.b[i] as number) * sat(2 * (this.d[i] as number))) >> 15;
    this.sz = sat(sz);
    const sp = sat(((this.a1 * sat(2 * this.r1)) >> 15) + ((this.a2 * sat(2 * this.r2)) >> 15));
    this.s = sat(sp + this.sz);
  }
}

/**
 * The QMF's last 24 values without shifting them on every pair: each value is written twice, 24
 * apart, so the window is always the 24 contiguous entries from `push`'s return, oldest first.
 */
class QmfWindow {
  readonly buffer = new Int32Array(48);
  private start = 0;

  /** Adds the next two values; returns where the window (oldest first) now starts. */
  push(a: number, b: number): number {
    const start = (this.start + 2) % 24;
    this.start = start;
    const at = (start + 22) % 24;
    this.buffer[at] = a;
    this.buffer[at + 1] = b;
    this.buffer[at + 24] = a;
    this.buffer[at + 25] = b;
    return start;
  }
}

const newLowBand = (): Band => new Band(32, 18432, 8);
const newHighBand = (): Band => new Band(8, 22528, 10);

/** Encodes 16 kHz PCM; keeps its state across calls (one per direction of a call). */
export class G722Encoder {
  private readonly low = newLowBand();
  private readonly high = newHighBand();
  /** The transmit QMF's last 24 input samples (see QmfWindow). */
  private readonly x = new QmfWindow();

  /** Encodes `pcm` (an even number of samples) into `out` from `offset`; returns the octets written. */
  encode(pcm: Int16Array, out: Uint8Array, offset = 0): number {
    const window = this.x;
    const x = window.buffer;
    let n = 0;
    for (let j = 0; j + 1 < pcm.length; j += 2) {
      // Transmit QMF (sec. 3.1): xA = sum h(2i) xin(j-2i), xB = sum h(2i+1) xin(j-2i-1) at half the
      // rate; the window holds the input oldest first (its [23] = xin(j)), and h(2i+1) = h(22-2i)
      // by symmetry.
      const w = window.push(pcm[j] as number, pcm[j + 1] as number);
      let xa = 0;
      let xb = 0;
      for (let i = 0; i < 12; i++) {
        xa += (x[w + 2 * i + 1] as number) * (qmf[11 - i] as number);
        xb += (x[w + 2 * i] as number) * (qmf[i] as number);
      }
      const xl = (xa + xb) >> 14;
      const xh = (xa - xb) >> 14;
      out[offset + n++] = (this.encodeHigh(xh) << 6) | this.encodeLow(xl);
    }
    return n;
  }

  /** Lower band (sec. 3.3): SUBTRA, QUANTL (6 bits), INVQAL, then adaptation. */
  private encodeLow(xl: number): number {
    const band = this.low;
    const el = sat(xl - band.s);
    const wd = el >= 0 ? el : -(el + 1);
    // The first interval whose decision level is above wd (30 past the last), by bisection: the
    // levels grow with the index, so this is the standard's linear search in five steps.
    let mil = 1;
    let hi = 30;
    while (mil < hi) {
      const mid = (mil + hi) >> 1;
      if (wd >= (((q6[mid] as number) * band.det) >> 12)) mil = mid + 1;
      else hi = mid;
    }
    const code = el < 0 ? (iln[mil] as number) : (ilp[mil] as number);
    const ril = code >> 2;
    const dq = (band.det * (qm4[ril] as number)) >> 15;
    band.adaptScale(wl[rl42[ril] as number] as number);
    band.update(dq);
    return code;
  }

  /** Higher band (sec. 3.4): SUBTRA, QUANTH (2 bits), INVQAH, then adaptation. */
  private encodeHigh(xh: number): number {
    const band = this.high;
    const eh = sat(xh - band.s);
    const wd = eh >= 0 ? eh : -(eh + 1);
    const mih = wd >= ((564 * band.det) >> 12) ? 2 : 1;
    const code = eh < 0 ? (ihn[mih] as number) : (ihp[mih] as number);
    const dq = (band.det * (qm2[code] as number)) >> 15;
    band.adaptScale(wh[rh2[code] as number] as number);
    band.update(dq);
    return code;
  }
}

/** Decodes to 16 kHz PCM; keeps its state across calls. */
export class G722Decoder {
  private readonly low = newLowBand();
  private readonly high = newHighBand();
  /** The receive QMF's last 12 pairs (difference, sum), see QmfWindow. */
  private readonly x = new QmfWindow();

  /** Decodes `payload` into `out` (two samples per octet) and returns `out`. */
  decode(payload: Uint8Array, out: Int16Array = new Int16Array(payload.length * 2)): Int16Array {
    const window = this.x;
    const x = window.buffer;
    const n = Math.min(payload.length, out.length >> 1);
    for (let k = 0; k < n; k++) {
      const octet = payload[k] as number;
      const rl = this.decodeLow(octet & 0x3f);
      const rh = this.decodeHigh(octet >> 6);
      // Receive QMF (sec. 4.4): xout1 = 2 sum h(2i) xd(j-i), xout2 = 2 sum h(2i+1) xs(j-i), with
      // xd = rL - rH and xs = rL + rH; the window holds them oldest first, so h(2i) meets its [22 - 2i].
      const w = window.push(rl - rh, rl + rh);
      let xout1 = 0;
      let xout2 = 0;
      for (let i = 0; i < 12; i++) {
        xout1 += (x[w + 2 * i] as number) * (qmf[11 - i] as number);
        xout2 += (x[w + 2 * i + 1] as number) * (qmf[i] as number);
      }
      out[2 * k] = sat(xout1 >> 11);
      out[2 * k + 1] = sat(xout2 >> 11);
    }
    return out;
  }

  /** Lower band (sec. 4.2): INVQBL with all 6 bits for the output, INVQAL (4 bits) for adaptation. */
  private decodeLow(code: number): number {
    const band = this.low;
    const out = sat(band.s + ((band.det * (qm6[code] as number)) >> 15));
    const rl = out > 16383 ? 16383 : out < -16384 ? -16384 : out;
    const ril = code >> 2;
    const dq = (band.det * (qm4[ril] as number)) >> 15;
    band.adaptScale(wl[rl42[ril] as number] as number);
    band.update(dq);
    return rl;
  }

  /** Higher band (sec. 4.3): INVQAH, output limited to 15 bits, then adaptation. */
  private decodeHigh(code: number): number {
    const band = this.high;
    const dq = (band.det * (qm2[code] as number)) >> 15;
    const out = sat(dq + band.s);
    const rh = out > 16383 ? 16383 : out < -16384 ? -16384 : out;
    band.adaptScale(wh[rh2[code] as number] as number);
    band.update(dq);
    return rh;
  }
}
