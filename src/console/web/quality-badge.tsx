import type { Quality } from './api-types';

/**
 * A tag's quality by colour and by word, so it reads the same to colour-blind eyes and
 * screen readers: a Good never looks like anything else.
 */
export function QualityBadge({ quality }: { quality: Quality }) {
  return <span class={`quality quality-${quality.toLowerCase()}`}>{quality}</span>;
}
