import test from 'ava';
import { contentTypeOf, fallbackContentType } from '../../src/web/content-types.js';

test('media types by extension, text with its charset, case ignored; others a download', (t) => {
  t.is(contentTypeOf('index.html'), 'text/html; charset=utf-8');
  t.is(contentTypeOf('APP.JS'), 'text/javascript; charset=utf-8');
  t.is(contentTypeOf('site.css'), 'text/css; charset=utf-8');
  t.is(contentTypeOf('logo.svg'), 'image/svg+xml');
  t.is(contentTypeOf('font.woff2'), 'font/woff2');
  t.is(contentTypeOf('data.bin'), fallbackContentType);
  t.is(contentTypeOf('Makefile'), fallbackContentType);
  t.is(contentTypeOf('archive.html.gz'), fallbackContentType, 'the last extension decides');
});
