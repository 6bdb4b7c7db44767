import { createRequire } from 'node:module';
import { inflateSync } from 'node:zlib';
import type * as ResvgModule from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { encodePng } from '../../src/report/charts/png-file.js';
import { chartFontOptions, renderPng } from '../../src/report/charts/render-chart.js';

// servelab's PNG files, read back by a decoder written here from the PNG specification (chunks, CRC-32, all five
// row filters), and compared pixel for pixel with what resvg's own encoder writes for the same drawing.

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let value = byte;
  for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});

function crc(bytes: Uint8Array): number {
  let value = 0xffffffff;
  for (const byte of bytes) value = (CRC_TABLE[(value ^ byte) & 0xff] as number) ^ (value >>> 8);
  return (value ^ 0xffffffff) >>> 0;
}

interface Decoded {
  width: number;
  height: number;
  colorType: number;
  filters: Set<number>;
  pixels: Buffer;
  chunkTypes: string[];
}

function paeth(left: number, up: number, upLeft: number): number {
  const estimate = left + up - upLeft;
  const [toLeft, toUp, toUpLeft] = [Math.abs(estimate - left), Math.abs(estimate - up), Math.abs(estimate - upLeft)];
  if (toLeft <= toUp && toLeft <= toUpLeft) return left;
  return toUp <= toUpLeft ? up : upLeft;
}

/** 8-bit RGB or RGBA, not interlaced: what resvg and servelab write. */
function decodePng(file: Buffer): Decoded {
  expect([...file.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunkTypes: string[] = [];
  const data: Buffer[] = [];
  let header: Buffer | undefined;
  for (let at = 8; at < file.length; ) {
    const length = file.readUInt32BE(at);
    const type = file.toString('latin1', at + 4, at + 8);
    expect(file.readUInt32BE(at + 8 + length), `CRC of ${type}`).toBe(crc(file.subarray(at + 4, at + 8 + length)));
    chunkTypes.push(type);
    if (type === 'IHDR') header = file.subarray(at + 8, at + 8 + length);
    if (type === 'IDAT') data.push(file.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  if (header === undefined) throw new Error('no IHDR');
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const colorType = header[9] as number;
  expect([header[8], header[10], header[11], header[12]]).toEqual([8, 0, 0, 0]);
  const channels = colorType === 6 ? 4 : 3;
  const rowBytes = width * channels;
  const raw = inflateSync(Buffer.concat(data));
  expect(raw.length).toBe((rowBytes + 1) * height);
  const rows = Buffer.alloc(rowBytes * height);
  const filters = new Set<number>();
  for (let row = 0; row < height; row++) {
    const filter = raw[row * (rowBytes + 1)] as number;
    filters.add(filter);
    for (let index = 0; index < rowBytes; index++) {
      const value = raw[row * (rowBytes + 1) + 1 + index] as number;
      const left = index >= channels ? (rows[row * rowBytes + index - channels] as number) : 0;
      const up = row > 0 ? (rows[(row - 1) * rowBytes + index] as number) : 0;
      const upLeft = row > 0 && index >= channels ? (rows[(row - 1) * rowBytes + index - channels] as number) : 0;
      const predicted = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter];
      if (predicted === undefined) throw new Error(`unknown row filter ${filter}`);
      rows[row * rowBytes + index] = (value + predicted) & 0xff;
    }
  }
  // As RGBA whatever was stored, so that the two encoders' files compare.
  const pixels = channels === 4 ? rows : Buffer.alloc(width * height * 4, 0xff);
  if (channels === 3) for (let pixel = 0; pixel < width * height; pixel++) rows.copy(pixels, pixel * 4, pixel * 3, pixel * 3 + 3);
  return { width, height, colorType, filters, pixels, chunkTypes };
}

describe('encodePng', () => {
  it('writes RGBA pixels as a PNG that a decoder reads back byte for byte', () => {
    const [width, height] = [7, 5];
    const pixels = Uint8Array.from({ length: width * height * 4 }, (_, index) => (index * 37 + (index >> 2)) & 0xff);
    const decoded = decodePng(encodePng(pixels, width, height));
    expect(decoded).toMatchObject({ width, height, colorType: 6, chunkTypes: ['IHDR', 'IDAT', 'IEND'] });
    expect(decoded.filters).toEqual(new Set([0]));
    expect([...decoded.pixels]).toEqual([...pixels]);
  });

  it('refuses pixels that do not fill the image', () => {
    expect(() => encodePng(new Uint8Array(10), 2, 2)).toThrow(/10 bytes of pixels for 2 × 2 RGBA \(expected 16\)/);
  });

  it('draws a chart exactly as resvg encodes it itself', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="90" height="40" viewBox="0 0 90 40"><rect width="90" height="40" fill="white"/>' +
      '<path d="M5,35L30,10L60,28L85,4" stroke="#1f77b4" stroke-width="2" fill="none"/>' +
      '<text x="4" y="14" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="10">p99 7 ms</text></svg>';
    const ours = decodePng(Buffer.from(await renderPng(svg)));
    const { Resvg } = createRequire(import.meta.url)('@resvg/resvg-js') as typeof ResvgModule;
    const theirs = decodePng(new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: chartFontOptions() }).render().asPng());
    expect([ours.width, ours.height]).toEqual([180, 80]);
    expect([theirs.width, theirs.height]).toEqual([180, 80]);
    expect(ours.pixels.equals(theirs.pixels)).toBe(true);
  });
});
