// SPDX-License-Identifier: Apache-2.0
// Checks of screenshots taken by headless Chromium, not pixel-exact: a PNG is decoded here (8-bit
// RGB/RGBA, non-interlaced, as Chromium writes them; node's zlib inflates the data) and each
// expected region (an element's box on the page) must hold drawn content: enough pixels away
// from the page background and more than a few distinct colours. A blank page, a chart that
// never drew or a card left empty fails.
import { inflateSync } from 'node:zlib';

// {width, height, rgba: Uint8Array} of a PNG buffer.
export function decodePng(buf) {
  const sig = [137, 80, 78, 71, 13, 10, 26, 10];
  if (!sig.every((b, i) => buf[i] === b)) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colour, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) {
        throw new Error(`PNG kind not handled: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? cur[x - channels] : 0;
      const b = prev[x];
      const c = x >= channels ? prev[x - channels] : 0;
      let p;
      if (filter === 0) p = 0;
      else if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else {
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[x] = (line[x] + p) & 255;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) out[(y * width + x) * 4 + k] = cur[x * channels + k];
      out[(y * width + x) * 4 + 3] = channels === 4 ? cur[x * channels + 3] : 255;
    }
    prev = cur;
  }
  return { width, height, rgba: out };
}

// Pixels of a box {x, y, width, height} (CSS px = image px at scale 1) that differ from `bg`
// by more than 24 in some channel, and the number of distinct colours (quantised to 4 bits).
export function regionStats(img, box, bg = [255, 255, 255]) {
  const x0 = Math.max(0, Math.floor(box.x));
  const y0 = Math.max(0, Math.floor(box.y));
  const x1 = Math.min(img.width, Math.ceil(box.x + box.width));
  const y1 = Math.min(img.height, Math.ceil(box.y + box.height));
  let ink = 0;
  let total = 0;
  const colours = new Set();
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * img.width + x) * 4;
      const [r, g, b] = [img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]];
      total++;
      if (Math.abs(r - bg[0]) > 24 || Math.abs(g - bg[1]) > 24 || Math.abs(b - bg[2]) > 24) ink++;
      colours.add(((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4));
    }
  }
  return { ink, total, share: total ? ink / total : 0, colours: colours.size };
}

// Checks every named region of a full-page screenshot: [{name, box, minShare, minColours}].
// Returns the failures as strings (empty when all hold).
export function checkRegions(png, regions) {
  const img = decodePng(png);
  const failures = [];
  const whole = regionStats(img, { x: 0, y: 0, width: img.width, height: img.height }, [246, 247, 249]);
  if (whole.share < 0.01 || whole.colours < 16) failures.push(`page looks blank (${(100 * whole.share).toFixed(1)}% ink, ${whole.colours} colours)`);
  for (const r of regions) {
    if (!r.box || r.box.width < 4 || r.box.height < 4) {
      failures.push(`${r.name}: not on the page`);
      continue;
    }
    const s = regionStats(img, r.box);
    if (s.share < (r.minShare ?? 0.01) || s.colours < (r.minColours ?? 3)) {
      failures.push(`${r.name}: ${(100 * s.share).toFixed(2)}% drawn, ${s.colours} colours`);
    }
  }
  return failures;
}
