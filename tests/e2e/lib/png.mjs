// Reading the pixels of the PNG screenshots the extension sends the model, to check what the
// model was shown. Handles what Chrome writes: 8-bit RGB or RGBA, not interlaced.
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

/** {width, height, pixel(x, y) → [r, g, b]} of a PNG given as bytes or base64. */
export function decodePng(input) {
  const png = typeof input === 'string' ? Buffer.from(input.replace(/^data:image\/png;base64,/, ''), 'base64') : input;
  assert.equal(png.subarray(1, 4).toString(), 'PNG', 'a PNG');
  let offset = 8;
  let header = null;
  const data = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.subarray(offset + 4, offset + 8).toString();
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), depth: body[8], colour: body[9], interlace: body[12] };
    } else if (type === 'IDAT') {
      data.push(body);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  assert.ok(header, 'the PNG has a header');
  const { width, height, depth, colour, interlace } = header;
  assert.ok(depth === 8 && (colour === 2 || colour === 6) && interlace === 0, `a PNG this reader knows (depth ${depth}, colour type ${colour}, interlace ${interlace})`);
  const channels = colour === 6 ? 4 : 3;
  const stride = width * channels;
  const raw = inflateSync(Buffer.concat(data));
  const pixels = Buffer.alloc(stride * height);
  // Each row starts with its filter; each filter predicts a byte from its left, upper and
  // upper-left neighbours (PNG specification, section 9).
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const left = i >= channels ? pixels[y * stride + i - channels] : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + i] : 0;
      const upLeft = y > 0 && i >= channels ? pixels[(y - 1) * stride + i - channels] : 0;
      let predicted;
      switch (filter) {
        case 0: predicted = 0; break;
        case 1: predicted = left; break;
        case 2: predicted = up; break;
        case 3: predicted = (left + up) >> 1; break;
        case 4: {
          const p = left + up - upLeft;
          const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
          predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
          break;
        }
        default: assert.fail(`unknown PNG filter ${filter}`);
      }
      pixels[y * stride + i] = (row[i] + predicted) & 0xff;
    }
  }
  return {
    width,
    height,
    pixel(x, y) {
      const at = y * stride + x * channels;
      return [pixels[at], pixels[at + 1], pixels[at + 2]];
    },
  };
}

/** How many pixels of the image have exactly the colour `#rrggbb`. */
export function countColour(image, hex) {
  const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  let n = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const [r, g, b] = image.pixel(x, y);
      if (r === want[0] && g === want[1] && b === want[2]) n += 1;
    }
  }
  return n;
}
