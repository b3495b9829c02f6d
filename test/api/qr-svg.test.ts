import test from 'ava';
import { qrSvg } from '../../src/api/qr-svg.js';

function modules(svg: string): { size: number; dark: Set<string> } {
  const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1]);
  const dark = new Set<string>();
  for (const match of svg.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) dark.add(`${match[1]},${match[2]}`);
  return { size, dark };
}

// A finder pattern: a dark 7×7 ring, a light ring inside, a dark 3×3 centre.
function isFinder(dark: Set<string>, left: number, top: number): boolean {
  for (let y = 0; y < 7; y++) {
    for (let x = 0; x < 7; x++) {
      const ring = Math.max(Math.abs(x - 3), Math.abs(y - 3));
      if (dark.has(`${left + x},${top + y}`) !== (ring !== 2)) return false;
    }
  }
  return true;
}

test('a QR code: a square of 4·version+17 modules in a 4-module quiet zone, three finder patterns', (t) => {
  const uri =
    'otpauth://totp/tagd:erin?issuer=tagd&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30';
  const svg = qrSvg(uri);
  t.regex(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox/);
  t.regex(svg, /<rect width="\d+" height="\d+" fill="#fff"\/>/, 'white under the modules');
  const { size, dark } = modules(svg);
  const count = size - 8;
  t.is((count - 17) % 4, 0, `${count} modules is a QR version`);
  // 110 bytes at error correction M need version 7 (45 modules): version 6 holds 106 bytes.
  t.is(count, 45);
  t.true(isFinder(dark, 4, 4), 'top left');
  t.true(isFinder(dark, 4 + count - 7, 4), 'top right');
  t.true(isFinder(dark, 4, 4 + count - 7), 'bottom left');
  t.false(isFinder(dark, 4 + count - 7, 4 + count - 7), 'none bottom right');
  for (const cell of dark) {
    const [x = -1, y = -1] = cell.split(',').map(Number);
    t.true(x >= 4 && y >= 4 && x < 4 + count && y < 4 + count, `${cell} inside the quiet zone`);
  }
  t.is(modules(qrSvg('short')).size - 8, 21, 'a short text fits version 1');
});
