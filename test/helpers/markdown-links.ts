/**
 * Reads Markdown as GitHub renders it, far enough to check links: the anchors its headings get
 * and the relative links it holds (outside code). Used by test/repository/docs-links.test.ts.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * The anchor GitHub gives a heading's text (github-slugger's rules): inline code marks and link
 * targets dropped, lower case, every character but letters, marks, digits, `_`, `-` and spaces
 * removed, each space turned into `-`.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading: its text
    .replace(/[`*]/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The text with fenced code blocks blanked (line count kept) and inline code spans removed. */
function prose(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const kept = lines.map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    if (marker) {
      fence = marker;
      return '';
    }
    return line;
  });
  return kept.join('\n').replace(/`[^`]*`/g, '');
}

/** Every anchor of a page: one per heading, a repeated one numbered `-1`, `-2`, … as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split('\n');
  let fence: string | undefined;
  for (const line of lines) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The targets of the inline links `[text](target)` of a page, outside code. */
export function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1] as string,
  );
}

/**
 * Every relative link of the given Markdown files (paths relative to `root`) that does not
 * resolve: a file or folder that does not exist, or an anchor its page does not have. Links
 * with a scheme (`https:`, `mailto:`) are not followed. Each problem reads `file: target (why)`.
 */
export function brokenLinks(root: string, files: string[]): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let found = anchorCache.get(path);
    if (!found) {
      found = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, found);
    }
    return found;
  };
  for (const file of files) {
    const path = join(root, file);
    for (const target of linksOf(readFileSync(path, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      const linked = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const resolved = linked === '' ? path : join(dirname(path), decodeURIComponent(linked));
      if (relative(root, resolved).startsWith('..')) {
        problems.push(`${file}: ${target} (outside the repository)`);
        continue;
      }
      if (!existsSync(resolved)) {
        problems.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
        problems.push(`${file}: ${target} (an anchor into a file that is not Markdown)`);
        continue;
      }
      if (!anchors(resolved).has(anchor)) problems.push(`${file}: ${target} (no such heading)`);
    }
  }
  return problems;
}
