/**
 * QR codes as SVG for the console's two-factor enrolment. The encoder is the one
 * qrcode-terminal (already a dependency, for `tagd users 2fa enable`) vendors: Kazuhiko Arase's
 * MIT QR generator, so drawing the code for a browser adds no package.
 */
import { createRequire } from 'node:module';

interface QrEncoder {
  addData(data: string): void;
  make(): void;
  getModuleCount(): number;
  isDark(row: number, column: number): boolean;
}

const require = createRequire(import.meta.url);
const QRCode = require('qrcode-terminal/vendor/QRCode/index.js') as new (
  typeNumber: number,
  errorCorrectLevel: number,
) => QrEncoder;
const errorCorrectLevel = require('qrcode-terminal/vendor/QRCode/QRErrorCorrectLevel.js') as {
  M: number;
};

/** Modules of white border on each side (the QR specification's quiet zone). */
const quietZone = 4;

/**
 * Draws `text` as a QR code (error correction M, the smallest version that holds it): dark
 * modules on a white square, whatever the console's theme, since cameras need the contrast.
 * @returns a standalone SVG document; one unit per module, to be scaled by the page.
 */
export function qrSvg(text: string): string {
  const qr = new QRCode(-1, errorCorrectLevel.M);
  qr.addData(text);
  qr.make();
  const count = qr.getModuleCount();
  const size = count + 2 * quietZone;
  let path = '';
  for (let row = 0; row < count; row++) {
    for (let column = 0; column < count; column++) {
      if (qr.isDark(row, column)) path += `M${column + quietZone} ${row + quietZone}h1v1h-1z`;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`;
}
