// The published fair-dice stream (docs/rules.md, "The fair-dice stream"), recomputed with WebCrypto.
import {_, fmt} from "./i18n.js";
const enc = new TextEncoder();

export const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
export const unhex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));

export async function sha256hex(bytes) {
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

// The byte stream of one roll: HMAC-SHA256(seed, `${clientSeed}:${seq}:${j}`) for j = 0, 1, ...
export class FairStream {
  constructor(key, clientSeed, seq) {
    this.key = key; this.prefix = `${clientSeed}:${seq}:`; this.block = 0; this.buf = new Uint8Array(0); this.pos = 0;
  }
  static async open(seedBytes, clientSeed, seq) {
    const key = await crypto.subtle.importKey("raw", seedBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new FairStream(key, clientSeed, seq);
  }
  async bytes(n) {
    while (this.buf.length - this.pos < n) {
      const block = new Uint8Array(await crypto.subtle.sign("HMAC", this.key, enc.encode(this.prefix + this.block)));
      const rest = this.buf.slice(this.pos);
      this.buf = new Uint8Array(rest.length + block.length); this.buf.set(rest); this.buf.set(block, rest.length);
      this.pos = 0; this.block += 1;
    }
    const out = this.buf.slice(this.pos, this.pos + n); this.pos += n; return out;
  }
  async roll(sides) {
    if (sides <= 256) {
      const limit = 256 - (256 % sides);
      for (;;) { const b = (await this.bytes(1))[0]; if (b < limit) return (b % sides) + 1; }
    }
    const limit = 2 ** 32 - (2 ** 32 % sides);
    for (;;) {
      const [a, b, c, d] = await this.bytes(4);
      const v = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
      if (v < limit) return (v % sides) + 1;
    }
  }
}

// '' when every listed die is the stream's die at that place, else what is wrong.
export async function checkDice(seedBytes, clientSeed, seq, dice) {
  const stream = await FairStream.open(seedBytes, clientSeed, seq);
  for (let i = 0; i < dice.length; i++) {
    const die = dice[i];
    const drawn = await stream.roll(die.sides);
    const expected = die.die === "dF" ? drawn - 2 : drawn;
    if (die.value !== expected) return fmt(_("die %(i)s (%(die)s) shows %(value)s, the stream gives %(expected)s"), {i, die: die.die, value: die.value, expected});
  }
  return "";
}
