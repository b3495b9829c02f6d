/**
 * MQTT topic filters and the tag templates they map to. A filter's wildcards capture parts of
 * the topic, in order: each `+` one level, a trailing `#` the rest of the topic (its levels
 * joined by `/`, possibly none). A template such as `Line1/{1}/{2}` names the tag path below the
 * driver, `{n}` standing for the n-th capture.
 */

/** Longest topic filter a profile may hold, characters. */
export const maxTopicLength = 1024;

/** A topic filter, checked and split into levels. */
export interface TopicFilter {
  text: string;
  levels: readonly string[];
  /** Number of wildcards (`+` and `#`): the captures a match yields. */
  wildcards: number;
  /** True when the last level is `#`. */
  multiLevel: boolean;
}

/** What is wrong with a topic filter, or undefined when it is a valid one. */
export function topicFilterProblem(text: string): string | undefined {
  if (text.length === 0) return 'the topic filter is empty';
  if (text.length > maxTopicLength) return `it is longer than ${maxTopicLength} characters`;
  if (text.includes('\u0000')) return 'it holds a NUL character';
  if (text.startsWith('$share/') || text.startsWith('$queue/'))
    return 'shared subscriptions ($share/…) are not supported';
  const levels = text.split('/');
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i] as string;
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1))
      return '# must be a whole level and the last one';
    if (level.includes('+') && level !== '+') return '+ must be a whole level';
  }
  return undefined;
}

/** What is wrong with a topic to publish to (no wildcards), or undefined. */
export function topicNameProblem(text: string): string | undefined {
  if (text.length === 0) return 'the topic is empty';
  if (text.length > maxTopicLength) return `it is longer than ${maxTopicLength} characters`;
  if (text.includes('\u0000')) return 'it holds a NUL character';
  if (/[+#]/.test(text)) return 'it must not hold the wildcards + or #';
  return undefined;
}

/** Parses a filter that {@link topicFilterProblem} accepts. */
export function parseTopicFilter(text: string): TopicFilter {
  const levels = text.split('/');
  let wildcards = 0;
  for (const level of levels) if (level === '+' || level === '#') wildcards++;
  return { text, levels, wildcards, multiLevel: levels[levels.length - 1] === '#' };
}

/**
 * The captures of `topic` under `filter`, or undefined when it does not match. As MQTT says, a
 * filter starting with a wildcard does not match a topic starting with `$` (broker topics).
 */
export function matchTopic(filter: TopicFilter, topic: string): string[] | undefined {
  const levels = topic.split('/');
  const pattern = filter.levels;
  if (topic.startsWith('$') && (pattern[0] === '+' || pattern[0] === '#')) return undefined;
  const captures: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as string;
    if (want === '#') {
      captures.push(levels.slice(i).join('/'));
      return captures;
    }
    const level = levels[i];
    if (level === undefined) return undefined;
    if (want === '+') captures.push(level);
    else if (want !== level) return undefined;
  }
  return levels.length === pattern.length ? captures : undefined;
}

/** A tag template, split into literal text and capture references. */
export type TagTemplate = readonly (string | number)[];

const placeholder = /\{(\d{1,2})\}/g;

/** Splits a template: strings stay literal, numbers are 0-based capture indices. */
export function parseTagTemplate(text: string): TagTemplate {
  const parts: (string | number)[] = [];
  let last = 0;
  for (const match of text.matchAll(placeholder)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(Number(match[1]) - 1);
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/**
 * What is wrong with a template for a filter with `wildcards` captures: a `{n}` beyond them, a
 * wildcard left unused (two topics would then feed one tag), a brace that is not a placeholder.
 */
export function tagTemplateProblem(text: string, wildcards: number): string | undefined {
  const used = new Set<number>();
  for (const part of parseTagTemplate(text)) {
    if (typeof part === 'number') {
      if (part < 0 || part >= wildcards)
        return wildcards === 0
          ? `{${part + 1}} needs a wildcard in the topic filter, which has none`
          : `{${part + 1}} is beyond the ${wildcards} wildcard(s) of the topic filter`;
      used.add(part);
    } else if (/[{}]/.test(part)) return 'braces may only enclose a wildcard number, e.g. {1}';
  }
  for (let index = 0; index < wildcards; index++) {
    if (!used.has(index))
      return `wildcard ${index + 1} of the topic filter is not used: every {n} must appear, or two topics would feed one tag`;
  }
  return undefined;
}

/** The tag path a template gives for a match's captures. */
export function fillTagTemplate(template: TagTemplate, captures: readonly string[]): string {
  let path = '';
  for (const part of template) path += typeof part === 'number' ? (captures[part] ?? '') : part;
  return path;
}
