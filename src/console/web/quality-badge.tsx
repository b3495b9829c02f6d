import type { Quality } from './api-types';

/**
 * A sample's quality (is the value current and from the device?) by word and colour, named as
 * such for screen readers. Good is quiet, no colour: it is the normal case, and a green badge
 * would read as good news beside a value that means bad news (a Status of `Error`). Stale is
 * amber; Bad and Unavailable (lost communications) are red, never grey or green: grey is for
 * what is switched off or out of service.
 */
export function QualityBadge({ quality }: { quality: Quality }) {
  return (
    <span class={`quality quality-${quality.toLowerCase()}`}>
      <span class="visually-hidden">Quality </span>
      {quality}
    </span>
  );
}
