import { crc32, deflateSync } from 'node:zlib';

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const BIT_DEPTH = 8;
const COLOR_TYPE_RGBA = 6;
const FILTER_NONE = 0;
/**
 * zlib level 3 on unfiltered rows. For the nine charts of a 10,000-request run (about 1,600 × 600 pixels each) that
 * took about 70 ms of CPU in all, against about 180 ms for resvg's own encoder, for files about 20% larger (about
 * 64 KB each). Chart images are mostly runs of one colour, which deflate finds without a row filter: the Up filter or
 * level 6 made the files a fifth to two fifths smaller for three times the CPU.
 */
const DEFLATE_LEVEL = 3;

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  // The CRC covers the type and the data, not the length.
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/**
 * A PNG file of 8-bit RGBA pixels (`width * height * 4` bytes, rows top to bottom, straight alpha), written
 * without row filters.
 */
export function encodePng(rgba: Uint8Array, width: number, height: number): Buffer {
  const rowBytes = width * 4;
  if (rgba.length !== rowBytes * height) throw new RangeError(`encodePng: ${rgba.length} bytes of pixels for ${width} × ${height} RGBA (expected ${rowBytes * height})`);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = BIT_DEPTH;
  header[9] = COLOR_TYPE_RGBA;
  // Bytes 10-12: compression method 0 (deflate), filter method 0, no interlace.
  const filtered = Buffer.allocUnsafe((rowBytes + 1) * height);
  for (let row = 0; row < height; row++) {
    const at = row * (rowBytes + 1);
    filtered[at] = FILTER_NONE;
    filtered.set(rgba.subarray(row * rowBytes, (row + 1) * rowBytes), at + 1);
  }
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(filtered, { level: DEFLATE_LEVEL })), chunk('IEND', new Uint8Array(0))]);
}
